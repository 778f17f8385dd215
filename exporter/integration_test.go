//go:build integration

package exporter

import (
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// TestPrometheusScrapesRealProbe runs the whole path: ttftop's probe
// measures the simulator, the exporter serves the results, a real
// Prometheus scrapes them, and PromQL over what Prometheus stored must
// agree with the probe's own results: counts exactly, the median within
// the bucket holding the samples' median.
func TestPrometheusScrapesRealProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and a simulator (~15 s)")
	}
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	srv := startSim(t)

	e := New(Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- e.ServeListener(serveCtx, ln) }()
	defer func() {
		stopServe()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()

	prom := &promServer{promtest.Start(t, promtest.Target{Job: "ttftop", URL: "http://" + ln.Addr().String() + "/metrics"})}

	// Probe results wait at the gate until Prometheus holds the zero
	// series, so rate() over Prometheus's data covers every probe.
	gate := make(chan struct{})
	var mu sync.Mutex
	var records []telemetry.ProbeRecord
	sink := telemetry.SinkFunc(func(o telemetry.Observation) {
		if o.Kind == telemetry.KindProbe {
			select {
			case <-gate:
			case <-ctx.Done():
			}
			mu.Lock()
			records = append(records, *o.Probe)
			mu.Unlock()
		}
		e.Observe(o)
	})
	runner, err := probe.NewRunner(probe.Options{URL: srv.URL(), Model: "sim-3b", MaxTokens: 16, Interval: 250 * time.Millisecond}, sink)
	if err != nil {
		t.Fatal(err)
	}
	probeCtx, stopProbe := context.WithCancel(ctx)
	probed := make(chan error, 1)
	go func() { probed <- runner.Run(probeCtx) }()

	waitFor(t, ctx, "Prometheus to scrape the announced endpoint's zero series", func() bool {
		v, ok := prom.scalar(t, `sum(ttftop_probe_ttft_seconds_count)`)
		return ok && v == 0
	})
	close(gate)
	waitFor(t, ctx, "20 probe results", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(records) >= 20
	})
	stopProbe()
	if err := <-probed; err != nil {
		t.Fatal(err)
	}
	// A scrape that succeeded over a second after the last result, so
	// Prometheus holds the final counts (one that failed under load marks
	// the series stale).
	stopped := float64(time.Now().UnixNano()) / 1e9
	waitFor(t, ctx, "a successful scrape after probing stopped", func() bool {
		v, ok := prom.scalar(t, `timestamp(up{job="ttftop"} == 1)`)
		return ok && v > stopped+1.5
	})

	mu.Lock()
	defer mu.Unlock()
	var ttft, tpot []float64
	var tokens, gaps float64
	for _, r := range records {
		if r.OK {
			ttft = append(ttft, r.TTFTms/1000)
			if r.TPOTms > 0 {
				tpot = append(tpot, r.TPOTms/1000)
			}
			tokens += float64(r.OutputTokens)
			gaps += float64(len(r.ITLms))
		}
	}
	t.Logf("%d probes, %d ok", len(records), len(ttft))
	if len(ttft) < 5 {
		t.Fatalf("only %d successful probes of %d", len(ttft), len(records))
	}
	for q, want := range map[string]float64{
		`sum(ttftop_probe_requests_total)`:                        float64(len(records)),
		`sum(ttftop_probe_requests_total{result="success"})`:      float64(len(ttft)),
		`sum(ttftop_probe_ttft_seconds_count)`:                    float64(len(ttft)),
		`sum(ttftop_probe_tpot_seconds_count)`:                    float64(len(tpot)),
		`sum(ttftop_probe_itl_seconds_count)`:                     gaps,
		`sum(ttftop_probe_output_tokens_total)`:                   tokens,
		`count(ttftop_probe_ttft_seconds_bucket{model="sim-3b"})`: float64(len(TTFTBuckets()) + 1),
	} {
		if v, ok := prom.scalar(t, q); !ok || v != want {
			t.Errorf("%s = %g (found %v), want %g", q, v, ok, want)
		}
	}
	checkMedian(t, prom, "ttftop_probe_ttft_seconds", TTFTBuckets(), ttft)
	checkMedian(t, prom, "ttftop_probe_tpot_seconds", ITLBuckets(), tpot)
}

// checkMedian compares Prometheus's histogram_quantile(0.5) with the
// samples: Prometheus finds the bucket holding rank 0.5 × n, which holds
// the ⌈n/2⌉-th smallest sample, and interpolates inside it.
func checkMedian(t *testing.T, prom *promServer, metric string, bounds, samples []float64) {
	t.Helper()
	q := fmt.Sprintf(`histogram_quantile(0.5, sum by (le) (rate(%s_bucket[1m])))`, metric)
	v, ok := prom.scalar(t, q)
	if !ok {
		t.Errorf("%s: no result", q)
		return
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	med := s[(len(s)+1)/2-1]
	lo, hi := 0.0, math.Inf(1)
	for _, b := range bounds {
		if b < med {
			lo = b
		} else {
			hi = b
			break
		}
	}
	if v < lo || v > hi {
		t.Errorf("%s = %g, want within the median's bucket (%g, %g] (median %g)", q, v, lo, hi, med)
	}
	t.Logf("%s: PromQL %.4f s, sample median %.4f s, bucket (%g, %g]", metric, v, med, lo, hi)
}

// promServer adds to internal/promtest's server the one query form this
// test needs.
type promServer struct{ *promtest.Server }

// scalar runs an instant query expected to return at most one sample.
func (p *promServer) scalar(t *testing.T, q string) (float64, bool) {
	t.Helper()
	res := p.Query(t, q, time.Time{})
	switch len(res) {
	case 0:
		return 0, false
	case 1:
		return res[0].Value, true
	}
	t.Fatalf("query %s: %d series, want one", q, len(res))
	return 0, false
}

// startSim serves the one simulated model these tests probe.
func startSim(t *testing.T) *sim.Server {
	return simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", DCGMListen: "",
		Models: []sim.ModelSpec{{Name: "sim-3b", Params: 3.21e9, GPU: "L4"}}})
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
