package race

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/sources/probe"
)

// accuracy is how far a client figure may trail the server's truth on a
// loaded, shared 2-core machine (a scheduling delay, not the probe's own
// error, which bench/probe_accuracy.sh measures in microseconds).
const accuracy = 60 * time.Millisecond

func newProbers(t testing.TB, urls ...string) []*probe.Prober {
	t.Helper()
	var ps []*probe.Prober
	for _, u := range urls {
		p, err := probe.New(probe.Options{URL: u, Model: "m", MaxTokens: 64, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		ps = append(ps, p)
	}
	return ps
}

// within checks got against the server's truth: never below it (the
// client cannot see an event before it was written) nor more than
// accuracy above.
func within(t *testing.T, what string, got, truth time.Duration) {
	t.Helper()
	if got < truth-time.Millisecond || got > truth+accuracy {
		t.Errorf("%s %v, server's truth %v: want within [−1ms, +%v]", what, got, truth, accuracy)
	}
}

// Two paced servers, the second slower to start and to decode: the
// race's TTFT, E2E and TPOT match each server's own instants, the finish
// order is the order of their last writes, and every token reached the
// live callback with its part.
func TestRaceAgainstPacedServers(t *testing.T) {
	fast := probetest.StartPaced(t, probetest.Pace{TTFT: 40 * time.Millisecond, Gap: 10 * time.Millisecond, Reasoning: 3, Answer: 12})
	slow := probetest.StartPaced(t, probetest.Pace{TTFT: 150 * time.Millisecond, Gap: 30 * time.Millisecond, Answer: 15})
	var mu sync.Mutex
	chunks := map[int][]probe.Progress{}
	// The slow one first: racer order must not decide the finish order.
	rd := Run(context.Background(), newProbers(t, slow.URL, fast.URL), Hooks{Chunk: func(c Chunk) {
		mu.Lock()
		chunks[c.Racer] = append(chunks[c.Racer], c.Progress)
		mu.Unlock()
	}})
	truths := []probetest.Truth{slow.Truths()[0], fast.Truths()[0]}
	for i, r := range rd.Results {
		if !r.OK {
			t.Fatalf("racer %d failed: %s %s", i, r.ErrorKind, r.Err)
		}
		if !r.Reused {
			t.Errorf("racer %d: a new connection at the start; the race warms them first", i)
		}
		within(t, "TTFT", r.TTFT, truths[i].TTFT())
		within(t, "E2E", r.E2E, truths[i].E2E())
		tpot, ok := r.TPOT()
		if !ok {
			t.Fatalf("racer %d: no TPOT", i)
		}
		// TPOT spreads the error of two instants over n−1 gaps.
		if d := tpot - truths[i].TPOT(); d < -accuracy/14 || d > accuracy/14 {
			t.Errorf("racer %d: TPOT %v, truth %v", i, tpot, truths[i].TPOT())
		}
		if r.OutputTokens != 15 || len(chunks[i]) != 15 {
			t.Errorf("racer %d: %d tokens, %d live chunks; want 15", i, r.OutputTokens, len(chunks[i]))
		}
	}
	wantPos := []int{2, 1}
	if truths[0].Writes[14].Before(truths[1].Writes[14]) {
		wantPos = []int{1, 2}
	}
	if rd.Positions[0] != wantPos[0] || rd.Positions[1] != wantPos[1] {
		t.Errorf("positions %v, want %v (the order of the servers' last writes)", rd.Positions, wantPos)
	}
	for k, c := range chunks[1] {
		want := probe.PartAnswer
		if k < 3 {
			want = probe.PartReasoning
		}
		if c.Parts != want || c.Fragment != probetest.Word(k) {
			t.Errorf("fast chunk %d: part %v text %q, want %v %q", k, c.Parts, c.Fragment, want, probetest.Word(k))
		}
	}
	if rd.StartSkew < 0 || rd.StartSkew > accuracy {
		t.Errorf("start skew %v", rd.StartSkew)
	}
}

// A racer whose server fails has no position; the others are still
// ranked, and the failure keeps no latencies.
func TestFailedRacerHasNoPosition(t *testing.T) {
	ok := probetest.StartPaced(t, probetest.Pace{TTFT: 5 * time.Millisecond, Gap: 5 * time.Millisecond, Answer: 4})
	broken := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	rd := Run(context.Background(), newProbers(t, broken.URL, ok.URL), Hooks{})
	if rd.Results[0].OK || rd.Results[0].TTFT != 0 || rd.Positions[0] != 0 {
		t.Errorf("failed racer: ok %v ttft %v position %d", rd.Results[0].OK, rd.Results[0].TTFT, rd.Positions[0])
	}
	if !rd.Results[1].OK || rd.Positions[1] != 1 {
		t.Errorf("healthy racer: ok %v position %d", rd.Results[1].OK, rd.Positions[1])
	}
}

// A server that cannot be warmed (nothing listens) is said, not hidden.
func TestWarmFailureIsReported(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rd := Run(context.Background(), newProbers(t, url), Hooks{})
	if rd.WarmErrors[0] == nil || rd.Results[0].OK {
		t.Errorf("warm error %v, ok %v: want both to show the dead server", rd.WarmErrors[0], rd.Results[0].OK)
	}
}

func TestPositionsShareTies(t *testing.T) {
	t0 := time.Now()
	rs := []*probe.Result{
		{OK: true, Start: t0, E2E: 30 * time.Millisecond},
		{OK: true, Start: t0.Add(10 * time.Millisecond), E2E: 20 * time.Millisecond},
		{OK: false},
		{OK: true, Start: t0, E2E: 10 * time.Millisecond},
	}
	got := Positions(rs)
	want := []int{2, 2, 0, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("positions %v, want %v", got, want)
		}
	}
}
