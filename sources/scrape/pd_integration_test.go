//go:build integration

package scrape

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestIntegrationDisaggregatedScrape scrapes a simulated P/D deployment
// directly (each worker a target with its role, the router a target of
// its own) before and after requests sent through the router: each pool
// counts every request, its KV transfer mean is the simulator's, the TTFT
// parts add up to the router's TTFT within the router histogram's
// resolution, a slowed transfer shows in both, and a closed decode worker
// is down in its pool.
func TestIntegrationDisaggregatedScrape(t *testing.T) {
	ctx := context.Background()
	var shift atomic.Int64
	pd := simtest.StartPD(t, 9, &shift)
	store := telemetry.NewStore(telemetry.DefaultStoreConfig())
	var scrapers []*Scraper
	for _, w := range pd.Workers() {
		scrapers = append(scrapers, New(Config{URL: w.URL(), Role: pd.Role(w)}, store))
	}
	scrapers = append(scrapers, New(Config{URL: pd.Router().URL()}, store))
	scrapeAll := func() {
		t.Helper()
		for _, s := range scrapers {
			s.ScrapeOnce(ctx) // a closed worker's failure is what is tested
		}
	}
	scrapeAll()
	const n = 20
	send := func() {
		for i := range n {
			if err := pd.Router().Send(ctx, sim.Request{PromptTokens: 1000, MaxTokens: 12 + i%4, IgnoreEOS: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send()
	scrapeAll()
	const window = time.Minute
	model := func() telemetry.PDModel {
		t.Helper()
		models := telemetry.PDModels(store.Snapshot(time.Now(), window))
		if len(models) != 1 {
			t.Fatalf("disaggregated models %+v, want org/pd", models)
		}
		return models[0]
	}
	m := model()
	if m.PrefillWorkers != 1 || m.DecodeWorkers != 2 || len(m.Routers) != 1 {
		t.Fatalf("%d prefill, %d decode workers, %d routers; want 1, 2, 1", m.PrefillWorkers, m.DecodeWorkers, len(m.Routers))
	}
	poolCount := func(rows []telemetry.EndpointSnapshot, sig telemetry.Signal) (c float64) {
		for _, es := range rows {
			c += es.Signals[sig].Count
		}
		return c
	}
	for _, c := range []struct {
		what string
		got  float64
	}{{"prefill TTFT", poolCount(m.Prefill, telemetry.TTFT)}, {"decode TTFT", poolCount(m.Decode, telemetry.TTFT)},
		{"KV transfers", poolCount(m.Decode, telemetry.KVTransferTime)}, {"router TTFT", poolCount(m.Routers, telemetry.TTFT)}} {
		if c.got != n {
			t.Errorf("%s counted %v requests, want %d", c.what, c.got, n)
		}
	}
	kv1, _ := m.PoolMean(telemetry.RoleDecode, telemetry.KVTransferTime)
	if want := simTransferMean(pd); math.Abs(kv1-want) > 1e-6*want {
		t.Errorf("decode pool's KV transfer mean %.4f ms, the simulator's %.4f", kv1, want)
	}
	parts, ok := m.TTFTParts()
	if !ok || parts.Router == nil {
		t.Fatalf("no TTFT parts: %+v", parts)
	}
	res := sim.RouterTTFTResolution(*parts.Router / 1000)
	t.Logf("TTFT parts (ms): prefill queue %.2f + prefill %.2f + KV transfer %.2f + first decode %.2f = %.2f; router %.2f (bucket %.0f ms)",
		parts.PrefillQueue, parts.Prefill, parts.KVTransfer, parts.FirstDecode, parts.Sum, *parts.Router, res*1000)
	if d := *parts.Router - parts.Sum; d < 0 || d > res*1000 {
		t.Errorf("router TTFT − parts = %.2f ms, want within [0, %.0f]", d, res*1000)
	}

	shift.Store(int64(simtest.SlowKVAfter))
	send()
	scrapeAll()
	m = model()
	kv2, _ := m.PoolMean(telemetry.RoleDecode, telemetry.KVTransferTime)
	parts2, _ := m.TTFTParts()
	t.Logf("slowed 4×: KV transfer %.2f ms (was %.2f), router TTFT %.2f ms (was %.2f)", kv2, kv1, *parts2.Router, *parts.Router)
	if math.Abs(kv2-2.5*kv1) > 1e-6*kv1 {
		t.Errorf("KV transfer mean %.4f after the slow-down, want 2.5 × %.4f", kv2, kv1)
	}
	if *parts2.Router-*parts.Router < (kv2-kv1)/2 {
		t.Errorf("router TTFT %.2f → %.2f ms: want it up by about the transfers' %.2f", *parts.Router, *parts2.Router, kv2-kv1)
	}

	if err := pd.Decode()[0].Close(); err != nil {
		t.Fatal(err)
	}
	scrapeAll()
	if m := model(); m.DecodeUp != 1 || m.DecodeWorkers != 2 {
		t.Errorf("after a decode worker closed: %d of %d decode workers up, want 1 of 2", m.DecodeUp, m.DecodeWorkers)
	}
}

// simTransferMean is the decode workers' mean transfer time as they
// counted it (ms).
func simTransferMean(pd *sim.PD) float64 {
	n, total := pd.KVTransfers()
	return total.Seconds() * 1000 / float64(n)
}
