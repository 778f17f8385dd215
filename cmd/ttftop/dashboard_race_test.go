package main

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/sources/probe"
)

// probedMap stands for the monitor's probed endpoints.
func probedMap(names ...string) probedAs {
	m := map[string]probe.Options{}
	for i, n := range names {
		m[n] = probe.Options{URL: fmt.Sprintf("http://127.0.0.1:%d", 9000+i), Model: "m" + n, Headers: []probe.Header{{Name: "X-Team", Value: "k"}}}
	}
	return func(ep string) (probe.Options, bool) { o, ok := m[ep]; return o, ok }
}

// The dashboard's race: probed endpoints race in the order given with
// their own probe options and the race's prompt and tokens; the others
// are said, and fewer than two probed is no race.
func TestDashboardRacerPrepare(t *testing.T) {
	racer, err := newDashboardRacer(probedMap("a", "b"), "")
	if err != nil {
		t.Fatal(err)
	}
	r, notes, err := racer.Prepare([]string{"b", "scraped", "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lanes := r.Lanes()
	if len(lanes) != 2 || lanes[0].Name != "b" || lanes[1].Name != "a" || lanes[0].Label != "A" {
		t.Fatalf("lanes %+v; want b then a", lanes)
	}
	ps := r.(*dashboardRace).probers
	if ps[0].Model() != "mb" || ps[0].Options().MaxTokens != dashboardRaceTokens || len(ps[0].Options().Headers) != 1 ||
		!strings.Contains(ps[0].Options().Prompt, "travel guide") {
		t.Errorf("racer b's options %+v: want its probe's model and key, the race's prompt and tokens", ps[0].Options())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "not probed") || !strings.Contains(notes[0], "scraped") {
		t.Errorf("notes %q: want the unprobed endpoint said", notes)
	}
	if !strings.Contains(r.Title(), fmt.Sprintf("max %d tokens", dashboardRaceTokens)) {
		t.Errorf("title %q", r.Title())
	}

	if _, _, err := racer.Prepare([]string{"a", "scraped"}); err == nil || !strings.Contains(err.Error(), "not probed: scraped") {
		t.Errorf("one probed endpoint: err %v, want no race and the unprobed one named", err)
	}
}

// At most maxRacers race; the rest are said.
func TestDashboardRacerBound(t *testing.T) {
	var names []string
	for i := range maxRacers + 2 {
		names = append(names, fmt.Sprintf("e%d", i))
	}
	racer, err := newDashboardRacer(probedMap(names...), "")
	if err != nil {
		t.Fatal(err)
	}
	r, notes, err := racer.Prepare(names)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Lanes()) != maxRacers || len(notes) != 1 || !strings.HasPrefix(notes[0], names[maxRacers]+" and the rest") {
		t.Errorf("%d lanes, notes %q; want %d and the rest said", len(r.Lanes()), notes, maxRacers)
	}
}

// A dashboard that records keeps each race beside its recording, named
// after it, each round's start, chunks and end, for replay.
func TestDashboardRaceRecorded(t *testing.T) {
	a := probetest.StartPaced(t, probetest.Pace{TTFT: 5 * time.Millisecond, Gap: 2 * time.Millisecond, Answer: 6})
	b := probetest.StartPaced(t, probetest.Pace{TTFT: 10 * time.Millisecond, Gap: 3 * time.Millisecond, Answer: 4})
	opts := map[string]probe.Options{"a/m": {URL: a.URL, Model: "m"}, "b/m": {URL: b.URL, Model: "m"}}
	dir := t.TempDir()
	racer, err := newDashboardRacer(func(ep string) (probe.Options, bool) { o, ok := opts[ep]; return o, ok },
		filepath.Join(dir, "session.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	r, notes, err := racer.Prepare([]string{"b/m", "a/m"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "session.race1.jsonl.gz")
	if len(notes) != 1 || !strings.Contains(notes[0], path) {
		t.Errorf("notes %q: want where the race is recorded", notes)
	}
	var sent atomic.Int64 // send is called from the racers' goroutines
	end := r.Run(context.Background(), func(tea.Msg) { sent.Add(1) })
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	h, events, ok, err := readRaceRecording(path)
	if err != nil || !ok {
		t.Fatalf("the race's recording: ok %v, %v", ok, err)
	}
	if len(h.Lanes) != 2 || h.Lanes[0].Name != "b/m" {
		t.Errorf("lanes %+v", h.Lanes)
	}
	chunks := map[int]int{}
	for _, e := range events {
		if e.Chunk != nil {
			chunks[e.Chunk.Racer]++
		}
	}
	first, last := events[0], events[len(events)-1]
	if first.Started == nil || first.Started.Round != 1 || last.Ended == nil || last.Ended.Round != 1 ||
		!reflect.DeepEqual(last.Ended.Positions, end.Positions) {
		t.Errorf("first %+v, last %+v; want round 1's start and its end (%v)", first, last, end.Positions)
	}
	if chunks[0] != 4 || chunks[1] != 6 || sent.Load() != 4+6+2 {
		t.Errorf("chunks recorded %v, sent to the view %d; want b's 4 and a's 6, and each with both results to the view", chunks, sent.Load())
	}
	r2, _, err := racer.Prepare([]string{"a/m", "b/m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if h, _, ok, err := readRaceRecording(filepath.Join(dir, "session.race2.jsonl.gz")); !ok || err != nil || h.Lanes[0].Name != "a/m" {
		t.Errorf("the second race is not recorded apart: ok %v, %v", ok, err)
	}
}

func TestRaceRecordingPath(t *testing.T) {
	for in, want := range map[string]string{
		"s.jsonl.gz": "s.race3.jsonl.gz", "s.jsonl": "s.race3.jsonl", "rec": "rec.race3.jsonl", "d/x.gz": "d/x.race3.jsonl.gz",
	} {
		if got := raceRecordingPath(in, 3); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
