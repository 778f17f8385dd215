package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/tui/raceview"
)

// A race's recording reads back as it was written: the header's lanes
// and title, then every message in order with its instant (plain and
// gzip); another file is not taken for one.
func TestRaceRecordingRoundTrip(t *testing.T) {
	msgs := []tea.Msg{
		raceview.Started{Round: 1},
		raceview.Chunk{Racer: 1, Text: "Once", Part: raceview.Reasoning, At: 40 * time.Millisecond, TTFT: 40 * time.Millisecond, Tokens: 1},
		raceview.Finished{Racer: 1, OK: true, TTFT: 40 * time.Millisecond, TPOT: 5 * time.Millisecond, HasTPOT: true, E2E: 90 * time.Millisecond, Tokens: 11},
		raceview.Finished{Racer: 0, Err: "http: 500"},
		raceview.Ended{Round: 1, StartSkew: 50 * time.Microsecond, Positions: []int{0, 1}},
		raceview.Summary{Text: "wins 0 1"},
	}
	lanes := []raceview.Lane{{Label: "A", Name: "a/m"}, {Label: "B", Name: "b/m"}}
	for _, name := range []string{"race.jsonl", "race.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			rec, err := newRaceRecorder(path, "· max 8 tokens", lanes)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				rec.Record(m)
			}
			rec.Record(tea.KeyPressMsg{}) // not the race's: not kept
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			h, events, ok, err := readRaceRecording(path)
			if err != nil || !ok {
				t.Fatalf("read: ok %v, %v", ok, err)
			}
			if h.Title != "· max 8 tokens" || !reflect.DeepEqual(h.Lanes, lanes) {
				t.Errorf("header %+v", h)
			}
			if len(events) != len(msgs) {
				t.Fatalf("%d events, want %d", len(events), len(msgs))
			}
			for i, e := range events {
				if !reflect.DeepEqual(e.msg(), msgs[i]) {
					t.Errorf("event %d: %#v, want %#v", i, e.msg(), msgs[i])
				}
				if i > 0 && e.At < events[i-1].At {
					t.Errorf("event %d recorded at %v, before the one before it (%v)", i, e.At, events[i-1].At)
				}
			}
		})
	}
	other := filepath.Join(t.TempDir(), "dash.jsonl")
	if err := os.WriteFile(other, []byte(`{"kind":"header","format":"ttftop-recording","version":3}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := readRaceRecording(other); ok || err != nil {
		t.Errorf("a dashboard's recording read as a race: ok %v, %v", ok, err)
	}
}

// Playback sends each message at its recorded instant since playback
// began: never sooner, and (on the bubble's clock) not later.
func TestPlayRaceAtTruePace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		events := []raceEvent{
			{At: 0, Started: &raceview.Started{Round: 1}},
			{At: 212 * time.Millisecond, Chunk: &raceview.Chunk{Text: "a"}},
			{At: 212 * time.Millisecond, Chunk: &raceview.Chunk{Racer: 1, Text: "b"}},
			{At: 250 * time.Millisecond, Chunk: &raceview.Chunk{Text: "c"}},
			{At: 1500 * time.Millisecond, Ended: &raceview.Ended{Round: 1}},
		}
		start := time.Now()
		var got []time.Duration
		playRace(context.Background(), events, func(tea.Msg) { got = append(got, time.Since(start)) })
		if len(got) != len(events) {
			t.Fatalf("%d sent, want %d", len(got), len(events))
		}
		for i, e := range events {
			if got[i] != e.At {
				t.Errorf("event %d sent at %v, recorded at %v", i, got[i], e.At)
			}
		}
	})
}

// A playback cut short (q) stops sending.
func TestPlayRaceStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		events := []raceEvent{{At: 10 * time.Millisecond, Summary: &raceview.Summary{}}, {At: time.Hour, Summary: &raceview.Summary{}}}
		sent := 0
		go func() {
			time.Sleep(time.Second) // the bubble's clock: the user quits a second in
			cancel()
		}()
		playRace(ctx, events, func(tea.Msg) { sent++ })
		if sent != 1 {
			t.Errorf("%d sent after a cancel a second in, want 1", sent)
		}
	})
}
