//go:build integration

package promql

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// waitHeld polls until Prometheus holds at least d of series.
func waitHeld(t *testing.T, prom *promtest.Server, series string, d time.Duration) {
	t.Helper()
	held := fmt.Sprintf("min(count_over_time(%s[%ds]))", series, int((d + 10*time.Second).Seconds()))
	deadline := time.Now().Add(2 * time.Minute)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if v := prom.Query(t, held, time.Time{}); len(v) == 1 && v[0].Value >= d.Seconds() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus holds less than %s of %s after 2m", d, series)
		}
		<-tick.C
	}
}

// checkValueHistory: with 45 s of history of the simulator in real
// Prometheus, a 40 s window (wider than the live data, which is one
// refresh) gets output tok/s points before the live start, each equal to
// Prometheus' own query_range value of the same query at that step.
func checkValueHistory(t *testing.T, target *sim.Server, prom *promtest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const window = historyWindow

	cfg := Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}
	rec := &recorder{}
	s, err := New(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	s.WindowChanged(window)
	if err := s.RefreshOnce(ctx); err != nil {
		t.Fatalf("RefreshOnce: %v", err)
	}
	if s.state.offset.d != 0 {
		t.Fatalf("clocks differ (%s)", s.state.offset.d)
	}
	// Prometheus' own answer to the same queries over the history's span.
	base, _ := url.Parse(prom.URL)
	api, err := newAPI(base, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range target.Models() {
		var hist []telemetry.Observation
		liveFrom := time.Time{}
		for _, o := range rec.find(telemetry.KindSample, m.Name, telemetry.OutputTPS) {
			if o.History {
				hist = append(hist, o)
			} else if liveFrom.IsZero() || o.At.Before(liveFrom) {
				liveFrom = o.At
			}
		}
		if liveFrom.IsZero() || len(hist) == 0 {
			t.Fatalf("%s: output tok/s: live from %s, %d history points", m.Name, liveFrom, len(hist))
		}
		first, last := hist[0].At, hist[0].At
		for _, o := range hist {
			if !o.At.Before(liveFrom) {
				t.Errorf("%s: history point at %s, not before the live start %s", m.Name, o.At, liveFrom)
			}
			first, last = minTime(first, o.At), maxTime(last, o.At)
		}
		if span := liveFrom.Sub(first); span < window-5*time.Second {
			t.Errorf("%s: history reaches %s before the live start, want about the %s window", m.Name, span, window)
		}
		want := map[time.Time]float64{}
		for _, tmpl := range s.state.queries.value[telemetry.OutputTPS] {
			v, _, _, err := api.QueryRange(ctx, s.expand.expand(tmpl), v1.Range{Start: first, End: last, Step: cfg.HistogramStep})
			if err != nil {
				t.Fatal(err)
			}
			for _, ss := range v.(model.Matrix) {
				for _, e := range s.state.reg.knownValue(ss.Metric) {
					if e.info.Name != m.Name {
						continue
					}
					for _, sp := range ss.Values {
						want[sp.Timestamp.Time()] = float64(sp.Value)
					}
				}
			}
		}
		for _, o := range hist {
			w, ok := want[o.At]
			if !ok || math.Abs(o.Value-w) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Errorf("%s: output tok/s at %s is %v; Prometheus' query_range says %v (present %v)", m.Name, o.At.Format("15:04:05.000"), o.Value, w, ok)
			}
		}
		t.Logf("%s: %d output tok/s history points from %s, live from %s", m.Name, len(hist), first.Format("15:04:05"), liveFrom.Format("15:04:05"))
	}
}

// TestIntegrationCounterOnlyEngineYoung: a llama.cpp page (counters and
// gauges, no histogram) scraped by real Prometheus for a few seconds,
// viewed over a window wider than its life: the value history dates the
// series' birth, so its output tok/s, a rate over 30 s, is marked young.
func TestIntegrationCounterOnlyEngineYoung(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx := context.Background()
	spec, _ := engines.Lookup(telemetry.EngineLlamaCpp)
	srv := httptest.NewServer(newGrowingPage(synthPage(spec, "")))
	defer srv.Close()
	prom := promtest.Start(t, promtest.Target{Job: "llama", URL: srv.URL + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	waitHeld(t, prom, "llamacpp:tokens_predicted_total", 4*time.Second)

	rec := &recorder{}
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: 30 * time.Second, Backfill: 10 * time.Second}, rec)
	if err != nil {
		t.Fatal(err)
	}
	s.WindowChanged(2 * time.Minute)
	if err := s.RefreshOnce(ctx); err != nil {
		t.Fatalf("RefreshOnce: %v", err)
	}
	var live []telemetry.Observation
	for _, o := range rec.find(telemetry.KindSample, "llama", telemetry.OutputTPS) {
		if !o.History {
			live = append(live, o)
		}
	}
	if len(live) != 1 {
		t.Fatalf("live output tok/s of llama: %+v", live)
	}
	if a := live[0].SeriesAge; a <= 0 || a >= 30*time.Second {
		t.Errorf("output tok/s of a series a few seconds old has SeriesAge %s, want it marked young (under the 30s rate window)", a)
	}
	// What views read: every [W] figure names the 30 s rate window; only
	// counters' rates are young (a mean of two counters is not).
	store := telemetry.NewStore(telemetry.StoreConfig{})
	young := map[telemetry.Signal]bool{}
	for _, o := range rec.All() {
		store.Observe(o)
		if o.Kind == telemetry.KindSample && !o.History && o.SeriesAge > 0 {
			young[o.Signal] = true
		}
	}
	for sig := range young {
		got, _ := store.ServerSignal("llama", sig, live[0].At, 2*time.Minute)
		if got.Young != telemetry.ReadsLowWhenYoung(sig) || got.RateWindowS != 30 {
			t.Errorf("%s over a young series reads: young %v, rate window %vs; want young %v, 30s", sig, got.Young, got.RateWindowS, telemetry.ReadsLowWhenYoung(sig))
		}
	}
	if !young[telemetry.OutputTPS] || len(young) < 2 {
		t.Errorf("young [W] figures %v: want output tok/s and at least one more", young)
	}
	t.Logf("figures over the young series: %v", young)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
