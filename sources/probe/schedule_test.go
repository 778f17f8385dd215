package probe

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func testSchedule(o Options, count int) *schedule {
	o = o.withDefaults()
	return newSchedule(o, count)
}

// TestScheduleRateCeiling: MaxPerMinute spaces starts even when the
// schedule asks for back-to-back requests.
// (On synctest's clock: the schedule's timers and the probes' work take
// no wall time, and the spans measured are exact.)
func TestScheduleRateCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testSchedule(Options{Concurrency: 4, Limits: Limits{MaxConcurrency: 4, MaxPerMinute: 600}}, 4)
		var mu sync.Mutex
		var starts []time.Time
		s.run(context.Background(), func(context.Context, int) *Result {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
			return &Result{OK: true}
		}, func(*Result) {})
		// Goroutine start-up noise can shift one start; the span cannot shrink.
		if span := starts[len(starts)-1].Sub(starts[0]); len(starts) != 4 || span < 290*time.Millisecond {
			t.Errorf("4 starts within %v: 600/min means ≥ 300 ms", span)
		}
	})
}

// TestScheduleConcurrencyCeiling: never more in flight than asked.
// (On synctest's clock: the schedule's timers and the probes' work take
// no wall time, and the spans measured are exact.)
func TestScheduleConcurrencyCeiling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testSchedule(Options{Concurrency: 3, Limits: Limits{MaxConcurrency: 3, MaxPerMinute: 60000}}, 12)
		var inFlight, peak atomic.Int32
		s.run(context.Background(), func(context.Context, int) *Result {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(80 * time.Millisecond)
			inFlight.Add(-1)
			return &Result{OK: true}
		}, func(*Result) {})
		if peak.Load() != 3 {
			t.Errorf("peak in flight %d, want 3", peak.Load())
		}
	})
}

// TestLimitsValidated: a schedule beyond the ceilings is refused.
func TestLimitsValidated(t *testing.T) {
	for _, o := range []Options{
		{URL: "http://x", Concurrency: 17},
		{URL: "http://x", Limits: Limits{MaxConcurrency: AbsoluteMaxConcurrency + 1}},
		{URL: "http://x", Limits: Limits{MaxPerMinute: AbsoluteMaxPerMinute + 1}},
		{URL: "http://x", Jitter: 2},
		{URL: "http://x", API: "grpc"},
		{URL: "ftp://x"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := New(Options{URL: "http://x", Concurrency: 32, Limits: Limits{MaxConcurrency: 32}}); err != nil {
		t.Errorf("raised ceiling refused: %v", err)
	}
}

// TestRetryAfterHonoured: a 429 with Retry-After: 1 holds the next start
// back by a second, through the real client.
func TestRetryAfterHonoured(t *testing.T) {
	var mu sync.Mutex
	var arrivals []time.Time
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		first := len(arrivals) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
			return
		}
		scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"), chatChunk("b"), finishChunk, "[DONE]")}})(w, r)
	}))
	p, err := New(Options{URL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var results []*Result
	s := newSchedule(p.opts, 2)
	s.run(context.Background(), func(ctx context.Context, _ int) *Result { return p.Do(ctx, nil) },
		func(r *Result) { mu.Lock(); results = append(results, r); mu.Unlock() })
	if len(arrivals) != 2 || results[0].ErrorKind != ErrRateLimited || results[0].RetryAfter != time.Second || !results[1].OK {
		t.Fatalf("arrivals %d, results %+v", len(arrivals), results)
	}
	if gap := arrivals[1].Sub(arrivals[0]); gap < 950*time.Millisecond {
		t.Errorf("second request %v after a 429 with Retry-After: 1", gap)
	}
}

// TestBackoffWithoutRetryAfter: 429s without a header back off too.
func TestBackoffWithoutRetryAfter(t *testing.T) {
	s := testSchedule(Options{Interval: 10 * time.Millisecond}, 0)
	s.observe(&Result{ErrorKind: ErrRateLimited})
	s.observe(&Result{ErrorKind: ErrRateLimited})
	if d := time.Until(s.notBefore); d < 1500*time.Millisecond || d > 2100*time.Millisecond {
		t.Errorf("after two 429s the next start waits %v, want ≈2 s (1 s doubled)", d)
	}
	if retryAfter(http.Header{"Retry-After": {"99999"}}, time.Now()) != time.Hour {
		t.Error("Retry-After not capped at an hour")
	}
	if d := retryAfter(http.Header{"Retry-After": {time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)}}, time.Now()); d < 28*time.Second || d > 31*time.Second {
		t.Errorf("HTTP-date Retry-After = %v", d)
	}
}

// TestJitter: starts spread around the interval, not in lockstep.
// (On synctest's clock: the schedule's timers and the probes' work take
// no wall time, and the spans measured are exact.)
func TestJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testSchedule(Options{Interval: 40 * time.Millisecond, Jitter: 0.5, Limits: Limits{MaxConcurrency: 1, MaxPerMinute: 60000}}, 8)
		var starts []time.Time
		s.run(context.Background(), func(context.Context, int) *Result {
			starts = append(starts, time.Now())
			return &Result{OK: true}
		}, func(*Result) {})
		distinct := map[time.Duration]bool{}
		for i := 1; i < len(starts); i++ {
			distinct[starts[i].Sub(starts[i-1]).Round(2*time.Millisecond)] = true
		}
		// Each gap is at least interval×(1−jitter); one start's goroutine may
		// run late, so check the span, which noise cannot shrink.
		if span := starts[len(starts)-1].Sub(starts[0]); span < 7*20*time.Millisecond {
			t.Errorf("8 starts within %v: below 7 × interval×(1−jitter)", span)
		}
		if len(distinct) < 3 {
			t.Errorf("gaps look lockstep: %v", distinct)
		}
	})
}

// TestScheduleCancel: cancelling stops the schedule, waits for probes in
// flight and leaks no goroutine.
func TestScheduleCancel(t *testing.T) {
	stream := scripted("text/event-stream", []step{{Data: sseData(chatChunk("a"))}, {Wait: 10 * time.Second, Data: sseData("[DONE]")}})
	var arrived atomic.Int32
	srv := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		stream(w, r)
	}))
	before := runtime.NumGoroutine()
	p, err := New(Options{URL: srv.URL, Model: "m", Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var canceled atomic.Int32
	go func() {
		defer close(done)
		newSchedule(p.opts, 0).run(ctx, func(ctx context.Context, _ int) *Result { return p.Do(ctx, nil) },
			func(r *Result) {
				if r.ErrorKind == ErrCanceled {
					canceled.Add(1)
				}
			})
	}()
	// Cancel once all four probes are in flight.
	for deadline := time.Now().Add(5 * time.Second); arrived.Load() < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 4 probes reached the server", arrived.Load())
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("schedule did not stop")
	}
	p.Close()
	if canceled.Load() == 0 {
		t.Error("no probe reported canceled")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestOutageKeepsTheInterval: a 503 with Retry-After: 60 does not push
// the next probe a minute away: during an outage every interval still
// gets its attempt (the availability objective counts them).
// (On synctest's clock: the schedule's timers and the probes' work take
// no wall time, and the spans measured are exact.)
func TestOutageKeepsTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testSchedule(Options{Interval: 50 * time.Millisecond, Jitter: 0.01}, 3)
		var starts []time.Time
		var mu sync.Mutex
		s.run(context.Background(), func(context.Context, int) *Result {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
			return &Result{ErrorKind: ErrHTTPStatus, Status: 503, RetryAfter: time.Minute}
		}, func(*Result) {})
		if len(starts) != 3 {
			t.Fatalf("%d starts", len(starts))
		}
		if span := starts[2].Sub(starts[0]); span > 5*time.Second {
			t.Errorf("3 probes at a 50 ms interval took %v: the 503's Retry-After held them back", span)
		}
	})
}
