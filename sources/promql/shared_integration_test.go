//go:build integration

package promql

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// twoModels are two models served by one simulator: three GPUs of one
// host on one DCGM page.
func twoModels() []sim.ModelSpec {
	return []sim.ModelSpec{
		{Name: "org/a", Params: 8.03e9, KVBytesPerToken: 131072, GPU: "H100 SXM", NumGPUs: 1, MaxBatch: 8, MeanOutputTokens: 32},
		{Name: "org/b", Params: 3.21e9, KVBytesPerToken: 114688, GPU: "H100 SXM", NumGPUs: 2, MaxBatch: 8, MeanOutputTokens: 32},
	}
}

// rawRate is Σ over the series of sel of (last − earlier sample) ÷ their
// time apart, from the raw counter samples Prometheus holds at at (the
// sample at or before at and the one at or before at − back): the
// simulator's own counters, not a rate() of them.
func rawRate(t *testing.T, prom *promtest.Server, sel string, at time.Time, back string) float64 {
	t.Helper()
	q := `sum((` + sel + ` - ` + sel + ` offset ` + back + `) / (timestamp(` + sel + `) - timestamp(` + sel + ` offset ` + back + `)))`
	ss := prom.Query(t, q, at)
	if len(ss) != 1 {
		t.Fatalf("%s: %+v", q, ss)
	}
	return ss[0].Value
}

// TestIntegrationSharedHostEnergy: two models served on one host, one
// DCGM page, real Prometheus, no pod labels (joined by host). Each
// endpoint (replica and model row) carries the host's power marked shared
// by the two replicas, and its energy per token in the store is the
// host's: the GPUs' energy counters' rate ÷ both models' token counters'
// rate, from the raw samples, within 2 %, never the whole host's energy
// over one model's tokens.
func TestIntegrationSharedHostEnergy(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", DCGMListen: "127.0.0.1:0", Load: 4, Seed: 31, Models: twoModels()})
	prom := promtest.Start(t, promtest.Target{Job: "vllm", URL: srv.URL() + "/metrics"}, promtest.Target{Job: "dcgm", URL: srv.DCGMURL() + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, "count_over_time(vllm:generation_tokens_total[15s]) >= 14", 2, 90*time.Second)
	prom.WaitForSeries(t, "count_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[15s]) >= 14", 3, 90*time.Second)

	// The store sees the last refresh only, so that its window means are
	// that refresh's figures, evaluated at one time.
	rec := &recorder{}
	store := telemetry.NewStore(telemetry.DefaultStoreConfig())
	var open atomic.Bool
	sink := telemetry.SinkFunc(func(o telemetry.Observation) {
		rec.Observe(o)
		if open.Load() || o.Kind == telemetry.KindEndpoint {
			store.Observe(o)
		}
	})
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}, sink)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // the second refresh knows the store holds DCGM series
		open.Store(i == 1)
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
	}
	host := strings.TrimPrefix(srv.URL(), "http://")
	replicas := []string{host + "/org/a", host + "/org/b"}
	p := lastOf(rec.find(telemetry.KindSample, replicas[0], telemetry.GPUPower))
	if len(p) != 1 {
		t.Fatalf("%s: no GPU power", replicas[0])
	}
	// rate() over the 10s window uses the samples inside it: from the
	// one ~9s before the evaluation to the last.
	at := p[0].At
	watts := rawRate(t, prom, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", at, "9s") / 1000
	tps := rawRate(t, prom, "vllm:generation_tokens_total", at, "9s")
	want := watts / tps
	for _, name := range append(replicas, "org/a", "org/b") {
		e, ok := store.Signal(name, telemetry.EnergyPerToken, time.Now(), 5*time.Minute)
		pw, _ := store.Signal(name, telemetry.GPUPower, time.Now(), 5*time.Minute)
		if !ok || e.Value == nil || pw.Value == nil {
			t.Errorf("%s: energy per token %+v, power %+v", name, e, pw)
			continue
		}
		t.Logf("%s: %.1f W, %.4f J/token; raw counters: host %.1f W ÷ both models' %.1f tok/s = %.4f J/token",
			name, *pw.Value, *e.Value, watts, tps, want)
		if d := math.Abs(*e.Value-want) / want; d > 0.02 {
			t.Errorf("%s: energy per token %.4f J, the host's is %.4f J (%.1f %% off)", name, *e.Value, want, 100*d)
		}
		for _, sh := range []*telemetry.GPUShare{pw.Shared, e.Shared} {
			if sh == nil || sh.Scope != "host" || sh.By != 2 || strings.Join(sh.Endpoints, ",") != strings.Join(replicas, ",") || sh.Partial {
				t.Errorf("%s: share %+v, want the host's, shared by %v", name, sh, replicas)
			}
		}
	}
}
