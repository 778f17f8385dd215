package promql

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The number of queries never depends on the number of endpoints: not at
// start (backfill of a 1 h window included), not per refresh.
func TestQueriesIndependentOfEndpoints(t *testing.T) {
	t.Parallel() // seconds of 1,000 endpoints' answers: not ahead of the waiting tests
	counts := func(n int) (first, next int) {
		t.Helper()
		models := make([]string, n)
		for i := range models {
			models[i] = fmt.Sprintf("org/model-%04d", i)
		}
		f := newFakeProm(t, models...)
		clk := &fakeClock{t: time.Unix(1_700_000_003, 0)} // the same steps end in both runs
		f.set(func(f *fakeProm) { f.clock = clk.Now })
		cfg := testConfig(f.URL())
		cfg.MaxEndpoints = 2000
		cfg.HTTP.Timeout = time.Minute // 1,000 endpoints' answers take a while on a busy machine
		s, rec := newTestSource(t, cfg)
		s.now = clk.Now
		s.WindowChanged(time.Hour)
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if w := rec.status(t).Warnings; len(w) != 0 {
			t.Fatalf("warnings: %q", w)
		}
		if got := len(rec.find("endpoint", "", "")); got != n {
			t.Fatalf("%d endpoints announced, want %d", got, n)
		}
		first = f.count()
		clk.Add(cfg.HistogramStep) // a step has ended: the refresh fetches it
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		return first, f.count() - first
	}
	f10, n10 := counts(10)
	f1000, n1000 := counts(1000)
	t.Logf("requests: first refresh %d (10 endpoints) vs %d (1000); next %d vs %d", f10, f1000, n10, n1000)
	if n10 != n1000 {
		t.Errorf("a refresh makes %d requests at 10 endpoints, %d at 1000", n10, n1000)
	}
	// The backfill chunks by points, so a large fleet may take a few more
	// requests for the same history, never one per endpoint.
	if f1000 > f10+16 {
		t.Errorf("the first refresh makes %d requests at 1000 endpoints, %d at 10", f1000, f10)
	}
}
