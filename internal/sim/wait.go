package sim

import (
	"context"
	"time"
)

// coarseSlack is how early the Go timer is asked to fire. On Linux the
// runtime's netpoller sleeps with millisecond granularity, so timers fire
// up to ~1.1 ms late; waking 1.5 ms early and finishing with a precise
// sleep keeps the token schedule within ~0.1 ms of the model.
const coarseSlack = 1500 * time.Microsecond

// sleepUntil waits for deadline (ns on the server's monotonic clock)
// while reaping aborted sequences, so a departing client frees its slot
// without waiting for the step to end. It returns false if ctx ended.
func (e *engine) sleepUntil(ctx context.Context, deadline int64) bool {
	slack := coarseSlack
	if e.srv.cfg.CoarseTiming {
		slack = 0
	}
	for {
		// A coarse engine nobody watches wakes coarseLag late and then
		// runs every step already due back to back.
		now, target := e.srv.now(), deadline
		if e.srv.cfg.CoarseTiming && deadline > now && !e.watched() {
			target += int64(coarseLag)
		}
		d := time.Duration(target - now)
		if d <= slack {
			break
		}
		e.timer.Reset(d - slack)
		e.sleeps.Add(1)
		select {
		case <-e.timer.C:
		case <-e.wake:
			e.timer.Stop()
			e.reap()
		case <-ctx.Done():
			e.timer.Stop()
			return false
		}
	}
	if e.srv.cfg.CoarseTiming {
		return true
	}
	if d := time.Duration(deadline-e.srv.now()) - spinSlack; d > 0 {
		preciseSleep(d)
	}
	// nanosleep itself overshoots by the kernel's timer slack (~50-80 µs);
	// spinning for the last stretch costs < 0.5% CPU at 20 ms steps.
	for e.srv.now() < deadline {
	}
	return true
}

// spinSlack is how much of the wait is busy-waited rather than slept.
const spinSlack = 100 * time.Microsecond

// lagAllowed reports whether a schedule running lag ns behind real time
// may still catch up: a coarse engine runs up to coarseLag behind on
// purpose, and when a client arrives it must run the steps it owes (the
// simulated GPU never paused) before serving the client on time.
func (e *engine) lagAllowed(lag int64) bool {
	return e.srv.cfg.CoarseTiming && lag <= int64(maxLag+coarseLag)
}

// watched reports whether an HTTP client waits for or streams from this
// engine, so its steps must run on time (internal load needs no timing).
func (e *engine) watched() bool {
	for _, s := range e.running {
		if !s.internal {
			return true
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.waiting {
		if !s.internal {
			return true
		}
	}
	return false
}
