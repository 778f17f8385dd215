package monitor

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/internal/sim"
)

// diagSpec is a small model on an L4 (about 12 ms steps) with a batch of
// 8, so the test machine keeps up with nine of them.
func diagSpec(name string) sim.ModelSpec {
	return sim.ModelSpec{Name: name, Params: 1.24e9, DtypeBytes: 2, KVBytesPerToken: 32768, GPU: "L4",
		MaxBatch: 8, MeanOutputTokens: 24, MaxModelLen: 1024}
}

// evaluations records the time of every evaluation (the monitor reads
// its clock once per evaluation), so a delay is counted in evaluations
// even when a loaded machine runs them late.
type evaluations struct {
	mu sync.Mutex
	at []time.Time
}

func (e *evaluations) now() time.Time {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.at = append(e.at, now)
	return now
}

// between counts the evaluations after from up to and including to.
func (e *evaluations) between(from, to time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, at := range e.at {
		if at.After(from) && !at.After(to) {
			n++
		}
	}
	return n
}

// words is a diagnosis in brief: its causes and, for unclear, what is
// missing.
func words(d diagnosis.Diagnosis) string {
	var out []string
	for _, f := range d.Causes {
		out = append(out, string(f.Cause)+strings.Join(f.Missing, "; "))
	}
	return strings.Join(out, ",")
}

// endpointOf is the endpoint name of a simulated model.
func endpointOf(t *testing.T, m *Monitor, model string) string {
	t.Helper()
	for _, es := range m.Store.Snapshot(time.Now(), time.Second).Endpoints {
		if es.Model == model {
			return es.Name
		}
	}
	return ""
}

// pollFor polls cond every 100 ms until it holds or d has passed; then
// what says what was awaited.
func pollFor(t *testing.T, d time.Duration, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what())
		}
		<-tick.C
	}
}
