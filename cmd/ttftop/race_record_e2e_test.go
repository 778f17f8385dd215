//go:build integration

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
)

// race --record keeps each chunk with the instant it arrived (checked
// against the instants the paced servers wrote each token: never before,
// never far after), and replay draws the race from it at that pace: in a
// real terminal, lane A never shows more tokens than had arrived live by
// the same time since the start, and its text grows in many steps.
func TestRaceRecordAndReplayAtTruePace(t *testing.T) {
	bin, dir, tm := tmuxWithBinary(t)
	keepTmuxServer(t, tm)
	const lag = 600 * time.Millisecond // a loaded machine's scheduling, as TestRaceInRealTerminal
	a := probetest.StartPaced(t, probetest.Pace{TTFT: 150 * time.Millisecond, Gap: 80 * time.Millisecond, Answer: 30})
	b := probetest.StartPaced(t, probetest.Pace{TTFT: 300 * time.Millisecond, Gap: 140 * time.Millisecond, Answer: 20})
	path := filepath.Join(dir, "race.jsonl.gz")
	if out, err := exec.Command(bin, "race", a.URL, b.URL, "--model", "m", "--record", path).CombinedOutput(); err != nil {
		t.Fatalf("race --record: %v\n%s", err, out)
	}
	h, events, ok, err := readRaceRecording(path)
	if err != nil || !ok {
		t.Fatalf("reading the recording: ok %v, %v", ok, err)
	}
	truths := []probetest.Truth{a.Truths()[0], b.Truths()[0]}
	n := []int{0, 0}
	var aAt []time.Duration // when each of A's chunks arrived, since the recording began
	for _, e := range events {
		if e.Chunk == nil {
			continue
		}
		r, k := e.Chunk.Racer, n[e.Chunk.Racer]
		n[r]++
		if k >= len(truths[r].Writes) {
			t.Fatalf("racer %d: more chunks recorded than its server wrote", r)
		}
		at, wrote := h.At.Add(e.At), truths[r].Writes[k]
		if at.Before(wrote.Add(-2 * time.Millisecond)) {
			t.Errorf("racer %d chunk %d recorded %v before its server wrote it", r, k, wrote.Sub(at))
		}
		if at.After(wrote.Add(lag)) {
			t.Errorf("racer %d chunk %d recorded %v after its server wrote it", r, k, at.Sub(wrote))
		}
		if r == 0 {
			aAt = append(aAt, e.At)
		}
	}
	if n[0] != 30 || n[1] != 20 {
		t.Fatalf("chunks recorded %v, want 30 and 20", n)
	}

	launched := time.Now()
	if out, err := tm("new-session", "-d", "-s", "replay", "-x", "160", "-y", "50",
		"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, "replay", path); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	seen := map[int]bool{}
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out, err := tm("capture-pane", "-p", "-t", "replay")
		if err != nil {
			t.Fatalf("capture: %v %s", err, out)
		}
		since := time.Since(launched) // the playback began after the launch: an upper bound of its time
		v := visibleTokens(laneTexts(out, 2)[0])
		seen[v] = true
		arrived := 0
		for _, at := range aAt {
			if at <= since {
				arrived++
			}
		}
		if v > arrived {
			t.Errorf("replay shows %d of A's tokens %v after launch; live, %d had arrived by then", v, since, arrived)
		}
		last = out
		if strings.Contains(out, "result: ") {
			break
		}
		time.Sleep(100 * time.Millisecond) // the sampling period of the captures, not synchronisation
	}
	if !strings.Contains(last, "result: 1st A") || !strings.Contains(last, "REPLAY of") {
		t.Fatalf("the replay did not end with the recorded result:\n%s", last)
	}
	if len(seen) < 6 {
		t.Errorf("lane A took only %d distinct lengths on screen: %v", len(seen), seen)
	}
	t.Logf("A's chunks recorded at %v; replay lengths %v; end:\n%s", fmt.Sprint(aAt), seen, last)
}

// demo --race honours the dashboard's --record and --json: the race's
// figures as race --json prints them, and its recording for replay.
func TestDemoRaceRecordsAndPrintsJSON(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting
	if testing.Short() {
		t.Skip("builds the binary and races the demo's models")
	}
	bin := buildTtftop(t)
	path := filepath.Join(t.TempDir(), "demo-race.jsonl")
	out, err := exec.Command(bin, "demo", "--race", "--json", "--record", path).Output()
	if err != nil {
		t.Fatalf("demo --race --json --record: %v\n%s", err, out)
	}
	var doc struct {
		Racers []struct{ Model string } `json:"racers"`
		Rounds []struct {
			Results []struct {
				OK       bool `json:"ok"`
				Position *int `json:"position"`
			} `json:"results"`
		} `json:"rounds"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("stdout is not race --json's document: %v\n%s", err, out)
	}
	h, events, ok, err := readRaceRecording(path)
	if err != nil || !ok {
		t.Fatalf("recording: ok %v, %v", ok, err)
	}
	if len(doc.Racers) != 4 || len(h.Lanes) != 4 || len(doc.Rounds) != 1 {
		t.Fatalf("%d racers in the JSON, %d lanes recorded, %d rounds; want the demo's 4 models, 1 round", len(doc.Racers), len(h.Lanes), len(doc.Rounds))
	}
	chunks := map[int]int{}
	ended := false
	for _, e := range events {
		if e.Chunk != nil {
			chunks[e.Chunk.Racer]++
		}
		ended = ended || e.Ended != nil
	}
	for i, r := range doc.Rounds[0].Results {
		if r.OK && chunks[i] == 0 {
			t.Errorf("racer %d finished but the recording holds none of its chunks", i)
		}
	}
	if !ended {
		t.Error("the recording has no end of the round")
	}
}
