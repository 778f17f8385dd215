package sweep

import (
	"fmt"
	"time"

	"github.com/ttftop/ttftop/sources/probe"
)

// Holder names what kept a step below its concurrency.
type Holder string

const (
	// HeldByRateCeiling: starts ran at the requests-per-minute ceiling.
	HeldByRateCeiling Holder = "rate ceiling"
	// HeldByServer: the server answered 429 and the probe waited as told.
	HeldByServer Holder = "server rate limiting"
	// HeldByClient: neither; the client started requests late (an
	// overloaded machine).
	HeldByClient Holder = "client"
)

// describe says the holder in words, with the ceiling's value.
func (h Holder) describe(l probe.Limits) string {
	switch h {
	case HeldByRateCeiling:
		return fmt.Sprintf("the requests-per-minute ceiling (%d a minute)", l.MaxPerMinute)
	case HeldByServer:
		return "the server's rate limiting (429 answers)"
	case HeldByClient:
		return "the client (requests started late, not at a ceiling: an overloaded machine?)"
	}
	return string(h)
}

// heldBackBy says what held a throttled step back (mu held): the rate
// ceiling when starts within the window came at 90 % of its rate or more
// (measured from the first start to the last, not to the window's end,
// which lies a request's duration after the last start), else the server
// when it answered 429, else the client.
func (m *stepRun) heldBackBy(w0, w1 time.Time) Holder {
	starts, limited := 0, false
	var first, last time.Time
	for _, r := range m.all {
		if !r.Start.Before(w0) && !r.Start.After(w1) {
			starts++
			if first.IsZero() || r.Start.Before(first) {
				first = r.Start
			}
			if r.Start.After(last) {
				last = r.Start
			}
		}
		limited = limited || r.ErrorKind == probe.ErrRateLimited
	}
	perMinute := 0.0
	if span := last.Sub(first); span > 0 {
		perMinute = float64(starts-1) / span.Minutes()
	}
	switch {
	case perMinute >= 0.9*float64(m.cfg.Probe.Limits.MaxPerMinute):
		return HeldByRateCeiling
	case limited:
		return HeldByServer
	}
	return HeldByClient
}

// stopAfter says why the sweep stops after its last step, or "", and the
// step a ceiling held back. A ceiling holds every higher step back as
// well, so a held-back step ends the sweep; an objective far exceeded (by
// fast failures, say) is the first reason given. Over-saturation is not
// judged on a held-back step: its throughput is the ceiling's.
func stopAfter(steps []Step, cfg Config, limits probe.Limits) (string, *HeldBack) {
	last := steps[len(steps)-1]
	if !last.Throttled() {
		return stopReason(steps, cfg.StopFactor), nil
	}
	held := &HeldBack{Concurrency: last.Concurrency, InFlight: *last.AchievedConcurrency, By: last.HeldBackBy}
	reason := farExceeded(last, cfg.StopFactor)
	if reason == "" {
		reason = fmt.Sprintf("concurrency %d held back to %.1f in flight by %s, short of the maximum concurrency %d",
			last.Concurrency, held.InFlight, held.By.describe(limits), cfg.MaxConcurrency)
	}
	return reason, held
}
