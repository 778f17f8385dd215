package promql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

// refreshFrozen runs refreshes every 5s for 20s on a fake clock; freeze
// sets, per refresh, the fake store's lags for the time elapsed since the
// first one. It returns the last refresh's observations.
func refreshFrozen(t *testing.T, freeze func(f *fakeProm, elapsed time.Duration)) *recorder {
	t.Helper()
	f := newFakeProm(t, "a", "b")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	for elapsed := time.Duration(0); elapsed <= 20*time.Second; elapsed += 5 * time.Second {
		f.set(func(f *fakeProm) { freeze(f, elapsed) })
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	return rec
}

// An endpoint whose newest sample stands still while the others' move on
// (a dead target the store keeps answering with its last sample) has
// stopped: its values are no data dated by that sample, with a refresh's
// interval, so that they turn stale; the other endpoint is untouched.
func TestFrozenEndpointHasStopped(t *testing.T) {
	rec := refreshFrozen(t, func(f *fakeProm, elapsed time.Duration) {
		f.lags = map[string]time.Duration{"b": elapsed}
	})
	newest := time.Unix(1_000_003-2, 0) // the fake's newest sample is 2s old
	nd := rec.find(telemetry.KindNoData, "b", telemetry.OutputTPS)
	if len(nd) != 1 || !nd[0].At.Equal(newest) || nd[0].Interval != 5*time.Second {
		t.Errorf("frozen endpoint's output tok/s: no data %+v, want one dated %s with a 5s interval", nd, newest)
	}
	if got := rec.find(telemetry.KindSample, "b", telemetry.OutputTPS); len(got) != 0 {
		t.Errorf("frozen endpoint's output tok/s: samples %+v, want none", got)
	}
	if got := rec.find(telemetry.KindSample, "a", telemetry.OutputTPS); len(got) != 1 || got[0].Interval != 5*time.Second {
		t.Errorf("moving endpoint's output tok/s: %+v, want one sample", got)
	}
	// Its distributions too, every refresh, not only once a histogram
	// step has ended; the moving endpoint's never.
	if nd := rec.find(telemetry.KindNoData, "b", telemetry.TTFT); len(nd) == 0 || !nd[len(nd)-1].At.Equal(newest) {
		t.Errorf("frozen endpoint's TTFT: no data %+v, want one dated %s", nd, newest)
	}
	if nd := rec.find(telemetry.KindNoData, "a", telemetry.TTFT); len(nd) != 0 {
		t.Errorf("moving endpoint's TTFT: no data %+v, want none", nd)
	}
	if w := strings.Join(rec.status(t).Warnings, "\n"); !strings.Contains(w, "1 endpoint stopped (") || !strings.Contains(w, "newest sample of b ") {
		t.Errorf("warnings %q: want the stopped replica said, in the singular", w)
	}
}

// A store that stalls as a whole (every endpoint's newest sample stands
// still) is late, not dead: its figures stay values, the lag allowed for.
func TestStalledStoreHasNotStopped(t *testing.T) {
	rec := refreshFrozen(t, func(f *fakeProm, elapsed time.Duration) { f.lag = elapsed })
	for _, name := range []string{"a", "b"} {
		got := rec.find(telemetry.KindSample, name, telemetry.OutputTPS)
		if len(got) != 1 || got[0].Interval < 20*time.Second {
			t.Errorf("%s in a stalled store: output tok/s %+v, want one sample with the lag allowed for", name, got)
		}
	}
}

// An endpoint that stopped and then moves on again (a restarted engine)
// has its rates marked young from its return, since a rate over [W] spans
// the gap and reads low; the endpoint that never stopped is not marked.
func TestRestartedEndpointReadsYoung(t *testing.T) {
	f := newFakeProm(t, "a", "b")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	refresh := func(models ...string) {
		t.Helper()
		f.set(func(f *fakeProm) { f.models = models })
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	refresh("a", "b")
	refresh("a") // b stopped
	refresh("a", "b")
	got := rec.find(telemetry.KindSample, "b", telemetry.OutputTPS)
	if len(got) != 1 || got[0].SeriesAge <= 0 || got[0].SeriesAge >= time.Minute {
		t.Fatalf("restarted endpoint's output tok/s %+v: want it marked young (a series age under the 1m window)", got)
	}
	if a := rec.find(telemetry.KindSample, "a", telemetry.OutputTPS); len(a) != 1 || a[0].SeriesAge != 0 {
		t.Errorf("the endpoint that never stopped: %+v, want no series age", a)
	}
}
