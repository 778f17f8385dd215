//go:build integration

package promql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// restartWindow is the rate window W of the restart test: short, so that
// the restarted replica's window fills in the test's time.
const restartWindow = 30 * time.Second

// TestIntegrationRestartedReplicaReadsTrue: two identical replicas of one
// model (same seed, same load) behind a real Prometheus scraping every
// second; once both rates are older than W, one simulator is stopped and
// started again on its address at once (a restart between two scrapes,
// or over one). From the first refresh after the store has its new
// process_start_time_seconds, its output tok/s must read young (marked, series age
// under W) and afresh (its new life's count only: well under its twin's,
// where Prometheus' rate() over the restart would read about the twin's),
// its endpoint labelled restarted; once W has passed since the restart,
// not young and within 10 % of its twin's.
func TestIntegrationRestartedReplicaReadsTrue(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := func() sim.Config {
		return sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 7, Models: twoModels()[:1]}
	}
	twin := simtest.Start(t, cfg())
	first, err := sim.New(cfg())
	if err != nil {
		t.Fatal(err)
	}
	simCtx, stopSim := context.WithCancel(ctx)
	if err := first.Start(simCtx); err != nil {
		stopSim()
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(first.URL(), "http://")
	prom := promtest.Start(t, promtest.Target{Job: "twin", URL: twin.URL() + "/metrics"}, promtest.Target{Job: "restarted", URL: first.URL() + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)

	figures := telemetry.NewStore(telemetry.DefaultStoreConfig())
	rec := &recorder{}
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, Refresh: time.Second, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: restartWindow, Backfill: 10 * time.Second},
		telemetry.Tee{figures, rec})
	if err != nil {
		t.Fatal(err)
	}
	twinName := strings.TrimPrefix(twin.URL(), "http://") + "/org/a"
	name := addr + "/org/a"
	tps := func(n string) telemetry.SignalSnapshot {
		snap, _ := figures.Signal(n, telemetry.OutputTPS, time.Now(), time.Minute)
		return snap
	}
	restartedLabel := func() string {
		var v string
		for _, o := range rec.find(telemetry.KindEndpoint, name, "") {
			v = o.Info.Labels[telemetry.LabelRestarted]
		}
		return v
	}
	// refreshUntil refreshes every second until done or the deadline.
	refreshUntil := func(limit time.Duration, done func() bool) bool {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		deadline := time.Now().Add(limit)
		for {
			if err := s.RefreshOnce(ctx); err != nil {
				t.Logf("refresh: %v", err) // a scrape that timed out on a loaded machine
			}
			if done() {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
			<-tick.C
		}
	}
	old := func(n string) bool { f := tps(n); return f.State == telemetry.Live && !f.Young && f.Value != nil }
	// Older than W by the clock too: a source's first refreshes, before
	// any range answer has dated the series, do not know them young.
	up := time.Now()
	if !refreshUntil(restartWindow+60*time.Second, func() bool { return time.Since(up) > restartWindow+5*time.Second && old(name) && old(twinName) }) {
		t.Fatalf("before the restart, want both rates older than W: %+v; twin %+v", tps(name), tps(twinName))
	}

	startOf := func() float64 {
		var v float64
		for _, smp := range prom.Query(t, `process_start_time_seconds{job="restarted"}`, time.Time{}) {
			v = max(v, smp.Value)
		}
		return v
	}
	oldStart := startOf()
	if oldStart == 0 {
		t.Fatal("the store has no process_start_time_seconds of the replica (the simulator exports it as vLLM does)")
	}

	killed := time.Now()
	stopSim()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := simtest.Start(t, sim.Config{Listen: addr, Load: 4, Seed: 7, Models: twoModels()[:1]})
	restarted := time.Now()
	if second.URL() != first.URL() {
		t.Fatalf("restarted on %s, want %s", second.URL(), first.URL())
	}
	young := func() bool { f := tps(name); return f.State == telemetry.Live && f.Young && f.Value != nil }
	// The first refresh after the store has the new process start marks
	// it young: not a histogram step and the Delay later, when the chain
	// shows the counter reset.
	visible, visibleAt, missed := false, time.Duration(0), false
	if startOf() > oldStart {
		visible, visibleAt = true, time.Since(killed)
	}
	if !refreshUntil(30*time.Second, func() bool {
		if young() {
			return true
		}
		if visible && !missed {
			missed = true
			t.Errorf("the store had the new process start %.1fs after the kill, but the next refresh left the output tok/s unmarked: %+v", visibleAt.Seconds(), tps(name))
		}
		if !visible && startOf() > oldStart {
			visible, visibleAt = true, time.Since(killed)
		}
		return false
	}) {
		t.Fatalf("after the restart: output tok/s %+v, want it young; restarted label %q", tps(name), restartedLabel())
	}
	youngAt := time.Since(restarted)
	seenBy := "the refresh that marked it was the first to see it"
	if visible {
		seenBy = fmt.Sprintf("the store had it %.1fs after the kill", visibleAt.Seconds())
	}
	t.Logf("young %.1fs after the kill (%s)", time.Since(killed).Seconds(), seenBy)
	got, other := tps(name), tps(twinName)
	t.Logf("%.1fs after the restart: young, series %.0fs old, %.1f tok/s; its twin %.1f", youngAt.Seconds(), got.SeriesAgeS, *got.Value, deref(other.Value))
	if at, how, ok := (telemetry.Endpoint{Labels: map[string]string{telemetry.LabelRestarted: restartedLabel()}}).Restarted(); !ok || how != processRestarted || time.Since(at) > time.Minute {
		t.Errorf("restarted label %q (%s, %s): want a restart by a new process under a minute old", restartedLabel(), at, how)
	}
	// Afresh: the new life's count over W. Young for under W/2 it reads
	// under 0.6 of its twin; rate() over the restart would read about 1.
	if other.Value == nil || got.SeriesAgeS >= restartWindow.Seconds()/2 || *got.Value > 0.6**other.Value {
		t.Errorf("young restarted replica %.1f tok/s at %.0fs old, twin %.1f: want the new life's count alone (under 0.6 of the twin's while under W/2 old)",
			*got.Value, got.SeriesAgeS, deref(other.Value))
	}

	// Once W has passed: not young, and within 10 % of its twin's.
	filled := func() bool { return time.Since(restarted) > restartWindow+5*time.Second && old(name) && old(twinName) }
	if !refreshUntil(restartWindow+30*time.Second, filled) {
		t.Fatalf("W after the restart: output tok/s %+v, twin %+v: want both older than W", tps(name), tps(twinName))
	}
	got, other = tps(name), tps(twinName)
	t.Logf("%.0fs after the restart: %.1f tok/s, its twin %.1f", time.Since(restarted).Seconds(), *got.Value, *other.Value)
	if ratio := *got.Value / *other.Value; ratio < 0.9 || ratio > 1.1 {
		t.Errorf("restarted replica %.1f tok/s, twin %.1f (ratio %.2f): want within 10%% once its window is filled", *got.Value, *other.Value, ratio)
	}
}
