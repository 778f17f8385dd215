//go:build integration

package promql

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestIntegrationDisaggregated: a simulated P/D deployment (one prefill
// worker, two decode workers, the llm-d router), each worker a target of a
// real Prometheus labelled with its llm-d.ai/role as Kubernetes discovery
// relabels it (llm_d_ai_role). The source makes one model with two pools
// and the router beside them. Requests sent through the router are
// counted alike by each pool and the router; the TTFT parts (prefill
// queue, prefill, KV transfer, first decode) add up to the router's TTFT
// within its histogram's resolution; a slowed KV transfer shows in the KV
// transfer figure and in TTFT; a decode worker killed is DOWN in the
// decode pool.
func TestIntegrationDisaggregated(t *testing.T) {
	t.Parallel() // it starts its own servers; most of its time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var shift atomic.Int64 // moves the scenario's clock to the slow transfers
	pd := simtest.StartPD(t, 5, &shift)
	var targets []promtest.Target
	for i, w := range pd.Workers() {
		targets = append(targets, promtest.Target{Job: "vllm-" + pd.Role(w) + string(rune('0'+i)), URL: w.URL() + "/metrics",
			Labels: map[string]string{sim.RolePromLabel: pd.Role(w)}})
	}
	targets = append(targets, promtest.Target{Job: "epp", URL: pd.Router().URL() + "/metrics"})
	prom := promtest.Start(t, targets...)
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, "vllm:num_requests_running", 3, 30*time.Second)
	prom.WaitForSeries(t, "llm_d_epp_request_total", 1, 30*time.Second)

	figures := telemetry.NewStore(telemetry.DefaultStoreConfig())
	rec := &recorder{}
	sink := telemetry.SinkFunc(func(o telemetry.Observation) { rec.Observe(o); figures.Observe(o) })
	const window = 2 * time.Minute
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, Refresh: time.Second, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: time.Minute, Backfill: 4 * time.Second}, sink)
	if err != nil {
		t.Fatal(err)
	}
	refreshUntil := func(what string, d time.Duration, done func() bool, state ...func() string) {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			if err := s.RefreshOnce(ctx); err != nil {
				t.Fatalf("RefreshOnce: %v", err)
			}
			if done() {
				return
			}
			if time.Now().After(deadline) {
				for _, f := range state {
					what += " (" + f() + ")"
				}
				t.Fatalf("no %s within %s", what, d)
			}
			time.Sleep(time.Second)
		}
	}
	const prefillPool, decodePool, router = "org/pd [prefill]", "org/pd [decode]", "org/pd"
	// Every histogram counted below read into a window once before the
	// requests: their increments count from there. A figure the store has
	// is not enough: a first step judged no data is one, and requests sent
	// before the chain's baseline point are (rightly) not in any window.
	windowed := func(name string, sig telemetry.Signal) bool {
		return len(rec.find(telemetry.KindHistogram, name, sig)) > 0
	}
	refreshUntil("pools and every worker's histograms", 30*time.Second, func() bool {
		ok := figures.Has(prefillPool, telemetry.Running) && figures.Has(decodePool, telemetry.Running) &&
			windowed(prefillPool, telemetry.TTFT) && windowed(decodePool, telemetry.TTFT) &&
			windowed(decodePool, telemetry.KVTransferTime) && windowed(router, telemetry.TTFT)
		for _, w := range pd.Workers() {
			ok = ok && windowed(strings.TrimPrefix(w.URL(), "http://")+"/org/pd", telemetry.TTFT)
		}
		return ok
	})
	pdModel := func() telemetry.PDModel {
		for _, m := range telemetry.PDModels(figures.Snapshot(time.Now(), window)) {
			if m.Model == "org/pd" {
				return m
			}
		}
		t.Fatalf("no disaggregated model org/pd in %v", endpointNames(figures))
		return telemetry.PDModel{}
	}
	if m := pdModel(); m.PrefillWorkers != 1 || m.DecodeWorkers != 2 || len(m.Routers) != 1 {
		t.Fatalf("pools: %d prefill, %d decode workers, %d routers; want 1, 2 and 1", m.PrefillWorkers, m.DecodeWorkers, len(m.Routers))
	}

	// Phase 1: n requests of 1000 prompt tokens, 4 at a time.
	const n = 24
	send := func() {
		var wg sync.WaitGroup
		for c := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n / 4 {
					if err := pd.Router().Send(ctx, sim.Request{PromptTokens: 1000, MaxTokens: 16 + c, IgnoreEOS: true}); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
	}
	send()
	count := func(name string, sig telemetry.Signal) float64 {
		snap, _ := figures.Signal(name, sig, time.Now(), window)
		return snap.Count
	}
	counted := func(want float64) func() bool {
		return func() bool {
			return count(prefillPool, telemetry.TTFT) == want && count(decodePool, telemetry.TTFT) == want &&
				count(decodePool, telemetry.KVTransferTime) == want && count(router, telemetry.TTFT) == want
		}
	}
	counts := func() string {
		reps := ""
		for _, w := range pd.Workers() {
			name := strings.TrimPrefix(w.URL(), "http://") + "/org/pd"
			reps += fmt.Sprintf("; %s %s TTFT %v", pd.Role(w), name, count(name, telemetry.TTFT))
		}
		return fmt.Sprintf("prefill TTFT %v, decode TTFT %v, transfers %v, router TTFT %v; source warnings %q%s", count(prefillPool, telemetry.TTFT),
			count(decodePool, telemetry.TTFT), count(decodePool, telemetry.KVTransferTime), count(router, telemetry.TTFT), rec.status(t).Warnings, reps)
	}
	// exact waits for every request to be counted by each pool and the
	// router, and reports whether they were. Never more, nor fewer: a
	// histogram step missed on a loaded machine keeps its requests in the
	// window after it (histogram.go), so a count short of the requests sent
	// is a loss, and fails (issue 25 saw 20, 16 or 11 of 24 counted; a run
	// here traced 15 of 24 to requests sent before the chains' baselines).
	exact := func(want float64) bool {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !counted(want)() {
			for _, c := range []float64{count(prefillPool, telemetry.TTFT), count(decodePool, telemetry.TTFT),
				count(decodePool, telemetry.KVTransferTime), count(router, telemetry.TTFT)} {
				if c > want {
					t.Fatalf("more counted than sent (%v): %s", want, counts())
				}
			}
			if time.Now().After(deadline) {
				t.Errorf("not every request counted within 60 s (want %v): %s", want, counts())
				return false
			}
			if err := s.RefreshOnce(ctx); err != nil {
				t.Fatalf("RefreshOnce: %v", err)
			}
			time.Sleep(time.Second)
		}
		return true
	}
	complete := exact(n)
	// Each pool's figures are what its workers counted: the decode pool's
	// mean transfer is the decode pages' sum over their count.
	xfer := func() float64 {
		n, total := pd.KVTransfers()
		return total.Seconds() * 1000 / float64(n)
	}
	m := pdModel()
	kv1, _ := m.PoolMean(telemetry.RoleDecode, telemetry.KVTransferTime)
	if want := xfer(); math.Abs(kv1-want) > 1e-6*want {
		t.Errorf("decode pool's KV transfer mean %.4f ms, the simulator's %.4f ms", kv1, want)
	}
	parts, ok := m.TTFTParts()
	if !ok || parts.Router == nil {
		t.Fatalf("no TTFT parts: %+v %v", parts, ok)
	}
	res := sim.RouterTTFTResolution(*parts.Router / 1000)
	t.Logf("TTFT parts (ms): prefill queue %.2f + prefill %.2f + KV transfer %.2f + first decode %.2f = %.2f; router %.2f (its bucket %.0f ms wide)",
		parts.PrefillQueue, parts.Prefill, parts.KVTransfer, parts.FirstDecode, parts.Sum, *parts.Router, res*1000)
	// Every request counted, the router's clock spans the parts: never
	// less. With windows dropped (exact), the means are over different
	// requests: within the resolution either way.
	low := 0.0
	if !complete {
		low = -res * 1000
	}
	if d := *parts.Router - parts.Sum; d < low || d > res*1000 {
		t.Errorf("router TTFT %.2f ms − parts %.2f ms = %.2f ms: want within [%.0f, %.0f ms]", *parts.Router, parts.Sum, d, low, res*1000)
	}

	// Phase 2: KV transfers 4× slower; as many requests again, alike.
	shift.Store(int64(simtest.SlowKVAfter))
	routerBefore := *parts.Router
	send()
	complete = exact(2*n) && complete
	m = pdModel()
	kv2, _ := m.PoolMean(telemetry.RoleDecode, telemetry.KVTransferTime)
	parts2, _ := m.TTFTParts()
	t.Logf("after the slow-down: KV transfer mean %.2f ms (was %.2f), router TTFT %.2f ms (was %.2f), parts %.2f ms",
		kv2, kv1, deref(parts2.Router), routerBefore, parts2.Sum)
	switch {
	case complete && math.Abs(kv2-2.5*kv1) > 1e-6*kv1: // half the window at 1×, half at 4×
		t.Errorf("KV transfer mean %.4f ms after the slow-down, want 2.5 × %.4f", kv2, kv1)
	case kv2 <= kv1 || kv2 > 4*kv1*(1+1e-9): // 4× when the window holds only slowed transfers; float rounding aside
		t.Errorf("KV transfer mean %.4f ms after the slow-down, want within (1, 4] × %.4f", kv2, kv1)
	}
	if parts2.Router == nil || *parts2.Router-routerBefore < (kv2-kv1)/2 {
		t.Errorf("router TTFT %.2f ms after the slow-down, was %.2f: want it up by about the transfers' %.2f ms",
			deref(parts2.Router), routerBefore, kv2-kv1)
	}

	// A decode worker killed: DOWN in the decode pool.
	dead := pd.Decode()[0]
	deadName := strings.TrimPrefix(dead.URL(), "http://") + "/org/pd"
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	refreshUntil("the killed decode worker DOWN", 30*time.Second, func() bool {
		h, down := figures.Target(deadName)
		return down && h.State == telemetry.TargetDown
	})
	var poolDown string
	for _, o := range rec.find(telemetry.KindEndpoint, decodePool, "") {
		poolDown = o.Info.Labels[telemetry.LabelReplicasDown]
	}
	if !strings.HasPrefix(poolDown, "1 of 2") {
		t.Errorf("decode pool's %s %q, want 1 of 2 replicas down", telemetry.LabelReplicasDown, poolDown)
	}
	if m := pdModel(); m.DecodeUp != 1 || m.DecodeWorkers != 2 || m.PrefillUp != 1 {
		t.Errorf("after the kill: decode %d of %d up, prefill %d up; want 1 of 2 and 1", m.DecodeUp, m.DecodeWorkers, m.PrefillUp)
	}
}

// endpointNames lists the store's endpoints, for failure messages.
func endpointNames(s *telemetry.Store) []string {
	var out []string
	for _, es := range s.Snapshot(time.Now(), time.Minute).Endpoints {
		out = append(out, es.Name)
	}
	return out
}
