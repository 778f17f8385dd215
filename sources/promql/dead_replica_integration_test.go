//go:build integration

package promql

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// deadReplicaBound is how soon after its simulator stops a replica's rate
// figures must read stale (plus the store's lag): Prometheus' next
// (failed) scrape, 1s, marks its series stale; the next refresh, 1s, finds
// it gone; its last values turn stale three refreshes (at least
// MinStaleAfter, 5s) after its newest sample. 15s is the default scrape
// interval, with which the source reads Prometheus here, as in the
// report; the rate window is a minute, so rates over its old samples
// would answer for 60s.
const deadReplicaBound = 15 * time.Second

// TestIntegrationDeadReplica: two replicas of one model, real Prometheus
// scraping each every second; one simulator is stopped. Within
// deadReplicaBound its output tok/s is stale (its last value kept), its
// TPOT, TTFT and MBU are not live, no TPOT derived from its ITL histogram ever
// stands in for its TPOT histogram (nor is it labelled derived), and the
// live replica's figures are live and measured after it. The stopped
// simulator also serves a model of its own, whose model row (the only row
// the table shows for a lone replica) is never live once its replica is
// not.
func TestIntegrationDeadReplica(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	checkDeadReplica(t, func(targets ...promtest.Target) (*promtest.Server, *promtest.Server) {
		prom := promtest.Start(t, targets...)
		return prom, prom
	}, 0, 0)
}

// TestIntegrationDeadReplicaLaggingVictoriaMetrics is the same against a
// VictoriaMetrics at its default flags (answers 30s behind), fed by
// Prometheus' remote write. VictoriaMetrics keeps answering with the dead
// replica's last sample, so the source tells the stop by that sample
// standing still, and is told the true scrape interval (1s): the dead
// replica is stale within the bound plus the lag, and the live one, whose
// figures are all 30s old, is not taken for dead.
func TestIntegrationDeadReplicaLaggingVictoriaMetrics(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	if promtest.VictoriaMetricsBinary() == "" {
		t.Skip("victoria-metrics binary not found: " + promtest.VictoriaMetricsInstallHint)
	}
	checkDeadReplica(t, func(targets ...promtest.Target) (*promtest.Server, *promtest.Server) {
		vm := promtest.StartVictoriaMetrics(t)
		return promtest.StartRemoteWriting(t, vm.RemoteWriteURL(), targets...), vm
	}, victoriaLatencyOffset, promtest.ScrapeInterval)
}

// victoriaLatencyOffset is VictoriaMetrics' default -search.latencyOffset.
const victoriaLatencyOffset = 30 * time.Second

// checkDeadReplica runs the dead-replica scenario: start gives the
// Prometheus that scrapes the targets and the store read (the same, or
// one it writes to), lag how far behind that store answers;
// scrapeInterval configures the source (0: its default, 15s).
func checkDeadReplica(t *testing.T, start func(...promtest.Target) (scraper, store *promtest.Server), lag, scrapeInterval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	models := twoModels()[:1] // one model: org/a
	live := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 41, Models: models})
	dead := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 42, Models: twoModels()}) // org/b its own
	prom, store := start(promtest.Target{Job: "vllm-live", URL: live.URL() + "/metrics"}, promtest.Target{Job: "vllm-dead", URL: dead.URL() + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, "count_over_time(vllm:generation_tokens_total[15s]) >= 14", 2, 90*time.Second)

	rec := &recorder{}
	figures := telemetry.NewStore(telemetry.DefaultStoreConfig())
	sink := telemetry.SinkFunc(func(o telemetry.Observation) { rec.Observe(o); figures.Observe(o) })
	// With Prometheus, ScrapeInterval is left at its default, 15s, though
	// it scrapes every second: its staleness markers tell the stop.
	s, err := New(Config{URL: store.URL, ScrapeInterval: scrapeInterval, Refresh: time.Second, HistogramStep: 2 * time.Second, Delay: 1500 * time.Millisecond,
		Window: time.Minute, Backfill: 10 * time.Second, MBU: mbuModels(t, live.Models(), true)}, sink)
	if err != nil {
		t.Fatal(err)
	}
	liveName := strings.TrimPrefix(live.URL(), "http://") + "/org/a"
	deadName := strings.TrimPrefix(dead.URL(), "http://") + "/org/a"
	loneName := strings.TrimPrefix(dead.URL(), "http://") + "/org/b" // org/b's only replica
	state := func(name string, sig telemetry.Signal) telemetry.SignalSnapshot {
		snap, _ := figures.Signal(name, sig, time.Now(), time.Minute)
		return snap
	}
	measured := func(name string) bool {
		tps, tpot, mbu := state(name, telemetry.OutputTPS), state(name, telemetry.TPOT), state(name, telemetry.MBU)
		return tps.State == telemetry.Live && tpot.State == telemetry.Live && !tpot.Approx && tpot.Count > 0 && mbu.State == telemetry.Live
	}
	// refreshEach runs a refresh every second until done or the deadline.
	refreshEach := func(deadline time.Time, done func() bool) bool {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if err := s.RefreshOnce(ctx); err != nil {
				t.Fatalf("RefreshOnce: %v", err)
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
	loneLive := func() bool {
		return state("org/b", telemetry.TTFT).State == telemetry.Live && state(loneName, telemetry.TTFT).State == telemetry.Live
	}
	if !refreshEach(time.Now().Add(40*time.Second+lag), func() bool { return measured(liveName) && measured(deadName) && loneLive() }) {
		t.Fatalf("before the stop: %s tok/s %+v, TPOT %+v; %s tok/s %+v, TPOT %+v; org/b TTFT %+v", liveName, state(liveName, telemetry.OutputTPS),
			state(liveName, telemetry.TPOT), deadName, state(deadName, telemetry.OutputTPS), state(deadName, telemetry.TPOT), state("org/b", telemetry.TTFT))
	}
	lastTPS := state(deadName, telemetry.OutputTPS).Value

	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	rec.Reset()
	var staleAfter time.Duration
	refreshes, liveMissed := 0, 0
	var loneRowLive []string // refreshes where org/b's row read live while its replica did not
	bound := deadReplicaBound + lag
	refreshEach(stopped.Add(bound+5*time.Second), func() bool {
		refreshes++
		if !measured(liveName) {
			// A scrape of the live simulator that times out on a loaded
			// machine marks its series stale too: counted, not failed.
			liveMissed++
			t.Logf("%.1fs after the stop, the live replica: tok/s %s, TPOT %s", time.Since(stopped).Seconds(),
				state(liveName, telemetry.OutputTPS).State, state(liveName, telemetry.TPOT).State)
		}
		for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT} {
			if row, replica := state("org/b", sig).State, state(loneName, sig).State; row == telemetry.Live && replica != telemetry.Live {
				loneRowLive = append(loneRowLive, fmt.Sprintf("%.1fs: %s %s, its replica's %s", time.Since(stopped).Seconds(), sig, row, replica))
			}
		}
		if staleAfter == 0 && state(deadName, telemetry.OutputTPS).State == telemetry.Stale {
			staleAfter = time.Since(stopped)
		}
		return false // watch the whole span: a derived TPOT could appear at any refresh
	})
	t.Logf("%s: output tok/s stale %.1fs after its simulator stopped; the live replica measured in %d of %d refreshes",
		deadName, staleAfter.Seconds(), refreshes-liveMissed, refreshes)
	if len(loneRowLive) > 0 {
		t.Errorf("org/b's model row read live after its only replica stopped, while the replica did not: %s", strings.Join(loneRowLive, "; "))
	}
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT} {
		if snap := state("org/b", sig); snap.State == telemetry.Live {
			t.Errorf("org/b's model row %s %+v %s after its only replica stopped: want no data or stale", sig, snap, time.Since(stopped).Round(time.Second))
		}
	}
	if !refreshEach(time.Now().Add(10*time.Second), func() bool { return measured(liveName) }) {
		t.Errorf("the live replica after the stop: tok/s %+v, TPOT %+v", state(liveName, telemetry.OutputTPS), state(liveName, telemetry.TPOT))
	}
	switch tps := state(deadName, telemetry.OutputTPS); {
	case staleAfter == 0 || staleAfter > bound:
		t.Errorf("dead replica's output tok/s went stale after %s (0: never), want within %s; now %+v", staleAfter, bound, tps)
	case tps.State != telemetry.Stale || tps.Value == nil || lastTPS == nil:
		t.Errorf("dead replica's output tok/s %+v: want stale, keeping its last value", tps)
	}
	// The model row sums only the live replica (the server's rate over
	// [W] still counts the dead one's older samples), and says so.
	row, liveTPS := state("org/a", telemetry.OutputTPS), state(liveName, telemetry.OutputTPS)
	t.Logf("model row org/a: output tok/s %v, the live replica's %v", deref(row.Value), deref(liveTPS.Value))
	if row.Value == nil || liveTPS.Value == nil || math.Abs(*row.Value-*liveTPS.Value) > 1e-9*math.Abs(*liveTPS.Value) {
		t.Errorf("model row's output tok/s %+v, want the live replica's %+v alone", row, liveTPS)
	}
	var counted string
	for _, o := range rec.find(telemetry.KindEndpoint, "org/a", "") {
		counted = o.Info.Labels[countedLabel]
	}
	if !strings.HasPrefix(counted, "1 of 2 replicas") {
		t.Errorf("model row's %s label %q, want 1 of 2 replicas counted", countedLabel, counted)
	}
	checkTargetDown(t, rec, deadName, liveName, lag == 0)
	checkLateSource(ctx, t, Config{URL: store.URL, ScrapeInterval: scrapeInterval, Refresh: time.Second, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: time.Minute, Backfill: 10 * time.Second}, deadName, liveName)
	if mbu := state(deadName, telemetry.MBU); mbu.State == telemetry.Live {
		t.Errorf("dead replica's MBU %+v: want no data or stale", mbu)
	}
	for _, sig := range []telemetry.Signal{telemetry.TPOT, telemetry.TTFT} {
		if snap := state(deadName, sig); snap.State == telemetry.Live || snap.Approx {
			t.Errorf("dead replica's %s %+v: want no data or stale, not a live or estimated figure", sig, snap)
		}
	}
	for _, name := range []string{deadName, liveName} {
		for _, o := range rec.find(telemetry.KindSample, name, telemetry.TPOT) {
			t.Errorf("%s: a TPOT sample (the ITL-derived estimate) %+v stood in for its TPOT histogram", name, o)
		}
		for _, o := range rec.find(telemetry.KindEndpoint, name, "") {
			if note, ok := o.Info.Labels["tpot_derived"]; ok {
				t.Errorf("%s labelled tpot_derived %q: it has a TPOT histogram", name, note)
			}
		}
	}
}

// deref is *v, or NaN for none (for logs).
func deref(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// checkLateSource starts a source after the dead replica stopped: it never
// sees it in a freshness answer, yet rates over [W] of its older samples
// answer. Within 10s of refreshes (every second) its output tok/s must
// have no live value and the model row's must be the live replica's.
func checkLateSource(ctx context.Context, t *testing.T, cfg Config, deadName, liveName string) {
	t.Helper()
	rec := &recorder{}
	s, err := New(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec.Reset()
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("late source: %v", err)
		}
		dead := rec.find(telemetry.KindSample, deadName, telemetry.OutputTPS)
		row, live := rec.find(telemetry.KindSample, "org/a", telemetry.OutputTPS), rec.find(telemetry.KindSample, liveName, telemetry.OutputTPS)
		if len(dead) == 0 && len(row) == 1 && len(live) == 1 && row[0].Value == live[0].Value {
			t.Logf("late source: model row %.1f tok/s, the live replica's %.1f, the dead one no live value", row[0].Value, live[0].Value)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("late source: dead replica's output tok/s %+v, model row's %+v, live replica's %+v: want no live dead value and the row the live one's", dead, row, live)
			return
		}
		<-tick.C
	}
}

// checkTargetDown: since the stop, the dead replica's target reads down
// (TargetUp 0, its target label "down since …" with the store's reason:
// Prometheus' own scrape error where it has a targets API that lists the
// target, withReason), the live one's up, and the model row's share up
// is a half, its label "1 of 2 replicas down".
func checkTargetDown(t *testing.T, rec *recorder, deadName, liveName string, withReason bool) {
	t.Helper()
	last := func(name string, sig telemetry.Signal) (float64, bool) {
		obs := rec.find(telemetry.KindSample, name, sig)
		if len(obs) == 0 {
			return 0, false
		}
		return obs[len(obs)-1].Value, true
	}
	if v, ok := last(deadName, telemetry.TargetUp); !ok || v != 0 {
		t.Errorf("dead replica's target up %v (present %v), want 0", v, ok)
	}
	if v, ok := last(liveName, telemetry.TargetUp); !ok || v != 1 {
		t.Errorf("live replica's target up %v (present %v), want 1", v, ok)
	}
	if v, ok := last("org/a", telemetry.TargetUp); !ok || v != 0.5 {
		t.Errorf("model row's share of replicas up %v (present %v), want 0.5", v, ok)
	}
	var h telemetry.TargetHealth
	var down bool
	for _, o := range rec.find(telemetry.KindEndpoint, deadName, "") {
		h, down = o.Info.Target()
	}
	switch {
	case !down || h.State != telemetry.TargetDown:
		t.Errorf("dead replica's target label: %+v (present %v), want down", h, down)
	case withReason && !strings.Contains(h.Reason, "connection refused"):
		t.Errorf("dead replica's reason %q, want the store's scrape error (connection refused)", h.Reason)
	default:
		t.Logf("dead replica: %s since %s: %s", h.State, h.Since.Format(time.TimeOnly), h.Reason)
	}
	var rows string
	for _, o := range rec.find(telemetry.KindEndpoint, "org/a", "") {
		rows = o.Info.Labels[telemetry.LabelReplicasDown]
	}
	if rows != "1 of 2 replicas down" {
		t.Errorf("model row's %s label %q, want 1 of 2 replicas down", telemetry.LabelReplicasDown, rows)
	}
}
