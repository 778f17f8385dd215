//go:build integration

package promql

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// historyWindow is the viewed window of the history tests: four times
// the chain's 10 s backfill, and more than the live data.
const historyWindow = 40 * time.Second

// TestIntegrationHistoryMatchesPrometheus: one simulator scraped by one
// real Prometheus until it holds more than historyWindow (the wait is most
// of the time: both checks read the same history, so they share it).
func TestIntegrationHistoryMatchesPrometheus(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	target, prom := prometheusOverSim(t, 11)
	waitHeld(t, prom, "vllm:num_requests_running", historyWindow+5*time.Second)
	t.Run("count", func(t *testing.T) { checkHistoryCount(t, target, prom) })
	t.Run("values", func(t *testing.T) { checkValueHistory(t, target, prom) })
}

// checkHistoryCount backfills a viewed window four times the chain's
// backfill, and checks that the store's TTFT count over the window (the
// detail view's n) is exactly the observations Prometheus holds in it:
// the difference of the summed _count at the window's ends.
func checkHistoryCount(t *testing.T, target *sim.Server, prom *promtest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const (
		step   = 2 * time.Second
		window = historyWindow
	)
	cfg := Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: step,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}
	store := telemetry.NewStore(telemetry.StoreConfig{HistResolution: time.Second})
	rec := &recorder{}
	s, err := New(cfg, telemetry.Tee{store, rec})
	if err != nil {
		t.Fatal(err)
	}
	s.WindowChanged(window)
	if err := s.RefreshOnce(ctx); err != nil {
		t.Fatalf("RefreshOnce: %v", err)
	}
	end := s.state.lastEnd[telemetry.TTFT]
	if end.IsZero() || s.state.offset.d != 0 {
		t.Fatalf("no TTFT steps fetched (end %s) or clocks differ (%s)", end, s.state.offset.d)
	}
	// The store's window (end−40s, end]: read just after end, so that the
	// slot of the increment ending at end−40s lies outside.
	at := s.localEval(end).Add(600 * time.Millisecond)
	for _, m := range target.Models() {
		hist := 0
		for _, o := range rec.find(telemetry.KindHistogram, m.Name, telemetry.TTFT) {
			if o.History {
				hist++
			}
		}
		if hist == 0 {
			t.Errorf("%s: no history windows", m.Name)
		}
		got, ok := store.Signal(m.Name, telemetry.TTFT, at, window)
		if !ok {
			t.Fatalf("%s: no TTFT in the store", m.Name)
		}
		count := fmt.Sprintf("sum(vllm:time_to_first_token_seconds_count{model_name=%q})", m.Name)
		hi, lo := prom.Query(t, count, end), prom.Query(t, count, end.Add(-window))
		if len(hi) != 1 || len(lo) != 1 {
			t.Fatalf("%s: Prometheus count at the window's ends: %v, %v", m.Name, hi, lo)
		}
		want := hi[0].Value - lo[0].Value
		inc := prom.Query(t, fmt.Sprintf("sum(increase(vllm:time_to_first_token_seconds_count{model_name=%q}[%ds]))", m.Name, int(window.Seconds())), end)
		t.Logf("%s: n over %s = %v; Prometheus holds %v (increase[%s] = %v); %d history windows", m.Name, window, got.Count, want, window, inc[0].Value, hist)
		if got.Count != want {
			t.Errorf("%s: n over %s is %v, Prometheus holds %v observations in it", m.Name, window, got.Count, want)
		}
		if !got.DataSince.IsZero() {
			t.Errorf("%s: window marked partly filled from %s though Prometheus holds all of it", m.Name, got.DataSince)
		}
	}
}

// prometheusOverSim starts a simulator (load 4, seed) and a real
// Prometheus scraping it, its target up; it skips without Prometheus.
func prometheusOverSim(t *testing.T, seed int64) (*sim.Server, *promtest.Server) {
	t.Helper()
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	target := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: seed})
	prom := promtest.Start(t, promtest.Target{Job: "vllm", URL: target.URL() + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	return target, prom
}
