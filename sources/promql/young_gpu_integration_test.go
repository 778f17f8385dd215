//go:build integration

package promql

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/telemetry"
)

// youngGPUWatts is the draw of the GPU the young-power test serves.
const youngGPUWatts = 300

// youngEnergyPage serves one GPU's energy counter growing at youngGPUWatts
// from start, exposed under two label sets at once (a target whose labels
// changed, both series live inside the window): one GPU, by its UUID.
func youngEnergyPage(start time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mj := 5e11 + youngGPUWatts*1000*time.Since(start).Seconds()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprintf(w, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"+
			"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"node-1\",namespace=\"old\"} %.0f\n"+
			"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"node-1\",namespace=\"new\"} %.0f\n", mj, mj)
	})
}

// TestIntegrationGPUPowerYoungAndOnce: with real Prometheus, GPU power
// over an energy series younger than the window (rate() divides by the
// whole window: it reads low) is marked young with the series' age, and
// the mark goes once the series is older than the window; the GPU exposed
// under two label sets is counted once.
func TestIntegrationGPUPowerYoungAndOnce(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx := context.Background()
	prom, esrv := promOverEngineAndDCGM(t, youngEnergyPage(time.Now()), "count_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[1m]) >= 3", 2)

	const window = 20 * time.Second
	rec := &recorder{}
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: window, Backfill: window}, rec)
	if err != nil {
		t.Fatal(err)
	}
	ep := strings.TrimPrefix(esrv.URL, "http://") + "/llama"
	power := func() telemetry.Observation {
		t.Helper()
		rec.Reset()
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
		p := lastOf(rec.find(telemetry.KindSample, ep, telemetry.GPUPower))
		if len(p) != 1 {
			t.Fatalf("%s: no GPU power; warnings %v", ep, rec.status(t).Warnings)
		}
		return p[0]
	}
	power() // the first refresh finds the DCGM series
	young := power()
	// Prometheus' own first sample of the series: how old it was then.
	first := prom.SampleTimes(t, `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{namespace="new"}`, young.At, window)
	if len(first) == 0 {
		t.Fatal("Prometheus holds no energy samples")
	}
	age := young.At.Sub(first[0])
	if age >= window-2*time.Second {
		t.Skipf("the series was already %v old at the first refresh (a slow start): nothing young to check", age)
	}
	if young.SeriesAge <= 0 || young.RateWindow != window {
		t.Errorf("power over a %v-old series (window %v) %.1f W not marked young: SeriesAge %v, RateWindow %v",
			age, window, young.Value, young.SeriesAge, young.RateWindow)
	}
	// Within a step R (2s) and a scrape of Prometheus' own dating.
	if d := young.SeriesAge - age; d.Abs() > 3*time.Second {
		t.Errorf("series age %v, Prometheus' first sample says %v", young.SeriesAge, age)
	}
	if young.Value > youngGPUWatts*1.05 {
		t.Errorf("power %.1f W over one GPU drawing %d W exposed twice: counted twice?", young.Value, youngGPUWatts)
	}
	t.Logf("young: %.1f W at series age %v (Prometheus: %v), SeriesAge %v", young.Value, age, age, young.SeriesAge)

	// Older than the window (by Prometheus' own count of 1s scrapes, with
	// a margin over the window and the step): unmarked, and the draw itself.
	prom.WaitForSeries(t, `count_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{namespace="new"}[1m]) > 26`, 1, 90*time.Second)
	old := power()
	if old.SeriesAge != 0 {
		t.Fatalf("power still marked young (SeriesAge %v) past the %v window", old.SeriesAge, window)
	}
	if math.Abs(old.Value-youngGPUWatts)/youngGPUWatts > 0.05 {
		t.Errorf("power over an old series %.1f W, want the GPU's %d W once", old.Value, youngGPUWatts)
	}
	t.Logf("old: %.1f W, unmarked", old.Value)
}
