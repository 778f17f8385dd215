package promql

import (
	"fmt"
	"sync"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// inFlight watches the refresh in progress: a store that accepts queries
// and never answers (a stopped process) holds it until the query timeout,
// and the source would read "ok" with live figures until the store finds
// it silent (three refresh intervals since the last report). Once a
// refresh has had no answer for hungAfter while refreshes normally take
// far less, the last status is sent again as stale, saying so; the report
// keeps its time, so the silence and the failures it covers stay those of
// the last refresh that ended. Counting from the last answer, not the
// refresh's start, keeps a long refresh of answered queries (a backfill)
// from reading as hung.
type inFlight struct {
	mu         sync.Mutex
	last       *telemetry.Observation // the last status report, nil before the first
	running    bool
	gen        uint64 // counts refreshes, so that a late timer of an ended one does nothing
	timer      *time.Timer
	answeredAt time.Time // the last answer of the refresh running
}

// hungFactor is how many times the last refresh's latency a refresh may
// go without an answer before it reads as hung (never under the refresh interval): a store
// that answers in 40 ms and has not in 5 s is not merely slow. A slow one
// (refreshes of seconds) waits for the silence instead.
const hungFactor = 10

// hungAfter is how long a refresh may go without an answer before it
// reads as hung, after one that took latency.
func hungAfter(latency, refresh time.Duration) time.Duration {
	return max(refresh, hungFactor*latency)
}

// refreshStarted notes a refresh beginning at began and arms the watch.
func (s *Source) refreshStarted(began time.Time) {
	f := &s.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = true
	f.gen++
	f.answeredAt = began
	if f.last == nil {
		return // nothing reported yet: nothing to mark stale
	}
	gen, after := f.gen, hungAfter(f.last.Status.Latency, s.cfg.Refresh)
	f.timer = time.AfterFunc(after, func() { s.stillInFlight(gen, began) })
}

// refreshEnded notes the refresh's status report, o (nil when it sent
// none: cut short by shutdown), and disarms the watch. It is called before
// o reaches the sink, so that no stale report follows it.
func (s *Source) refreshEnded(o *telemetry.Observation) {
	f := &s.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = false
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	if o != nil {
		c := *o
		st := *o.Status
		c.Status = &st
		f.last = &c
	}
}

// answered notes an answer of the store (not a timeout) at at.
func (s *Source) answered(at time.Time) {
	f := &s.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	if at.After(f.answeredAt) {
		f.answeredAt = at
	}
}

// stillInFlight sends the last status again as stale while refresh gen,
// begun at began, is running and has had no answer for hungAfter, and
// again every refresh interval.
func (s *Source) stillInFlight(gen uint64, began time.Time) {
	f := &s.flight
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.running || f.gen != gen || f.last == nil {
		return
	}
	now := s.now()
	o := *f.last
	st := *o.Status
	after := hungAfter(st.Latency, s.cfg.Refresh)
	if quiet := now.Sub(f.answeredAt); quiet < after {
		f.timer = time.AfterFunc(after-quiet, func() { s.stillInFlight(gen, began) })
		return
	}
	st.State = telemetry.Stale
	st.Err = fmt.Sprintf("no answer for %s (refresh in flight for %s; the last took %s): the store is stopped, overloaded or unreachable",
		roundLag(now.Sub(f.answeredAt)), roundLag(now.Sub(began)), shortDuration(st.Latency))
	o.Status, o.Err = &st, st.Err
	s.sink.Observe(o) // under f.mu: the refresh's own report waits for it
	f.timer = time.AfterFunc(s.cfg.Refresh, func() { s.stillInFlight(gen, began) })
}

// shortDuration is d to the millisecond below a second, else as roundLag.
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return roundLag(d)
}
