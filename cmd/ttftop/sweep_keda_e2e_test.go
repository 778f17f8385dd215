//go:build integration

package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// kedaModel is the case at small scale: a 2 ms step plus 1.6 ms
// per sequence, TPOT ≈ 3.6, 5.2, 8.4 and 14.8 ms at 1, 2, 4 and 8
// streams, so the knee's TPOT lies inside vLLM's first TPOT bucket
// (0, 10 ms]. Against a 10 ms objective the knee is 4; a machine loaded
// enough to push concurrency 4 past 10 ms makes it 2, and then 4, twice
// the knee, is past 10 ms as well.
func kedaModel() sim.ModelSpec {
	return bendingModel("keda", 2*time.Millisecond, 1600*time.Microsecond, 64)
}

// The ScaledObject a sweep of the simulator prints decides right when a
// real Prometheus, scraping that simulator, evaluates its query as KEDA
// does (an instant query, one sample, compared with the threshold): below
// the threshold at a quarter of the knee's concurrency, above it at twice
// the knee. The old trigger, histogram_quantile against the knee's TPOT
// p95, read 9.5 ms at every load under vLLM's first bound (10 ms): above
// its threshold even at a quarter of the knee.
func TestSweepKEDATriggerDecides(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, sweeps, and loads the simulator under Prometheus for about a minute")
	}
	bin := buildTtftop(t)
	url := startSim(t, kedaModel())
	prom := promtest.Start(t, promtest.Target{Job: "sim", URL: url + "/metrics"})
	// A sweep on a machine whose load then drops can put the knee a step
	// low (a step above it inflated); twice that knee is then no load past
	// it, which the clients see. Such a run proves nothing either way:
	// sweep again, at most three times.
	for attempt := 1; !kedaDecision(t, bin, url, prom); attempt++ {
		if attempt == 3 {
			t.Fatal("in three sweeps the load at twice the knee was never past the knee as the clients measured it: the machine's load moved too much")
		}
	}
}

// kedaDecision sweeps the simulator and has Prometheus evaluate the
// trigger at a quarter of the knee and at twice it; false when the load at
// twice the knee was not past the knee (its client TPOT p95 under 1.25×
// the knee's, or under the bound the sweep warned it fires at), so the
// run could not judge the trigger there.
func kedaDecision(t *testing.T, bin, url string, prom *promtest.Server) bool {
	t.Helper()
	const window = 6 * time.Second
	out, errs, err := runSweepBin(bin, url, "--max-concurrency", "8", "--max-tokens", "16", "--min-requests", "10",
		"--tolerance", "0.2", "--max-step-time", "10s", "--slo-tpot", "10ms", "--keda-window", "6s", "--json")
	var rep struct {
		Knee *struct {
			Concurrency int     `json:"concurrency"`
			TPOTp95ms   float64 `json:"tpot_p95_ms"`
		} `json:"knee"`
		KEDA    string `json:"keda"`
		Trigger struct {
			Query     string  `json:"query"`
			Threshold float64 `json:"threshold_ratio"`
			Series    string  `json:"series"`
			BoundMS   float64 `json:"bound_ms"`
			Warning   string  `json:"warning"`
		} `json:"keda_trigger"`
	}
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
		t.Fatalf("sweep: %v, JSON: %v\nstdout:\n%s\nstderr:\n%s", err, jerr, out, errs)
	}
	t.Logf("sweep progress:\n%s", errs)
	var exit *exec.ExitError
	if rep.Knee == nil && errors.As(err, &exit) && exit.ExitCode() == 1 {
		// Concurrency 1 runs at 3.6 ms: only a stalled machine misses 10 ms.
		t.Logf("no knee (concurrency 1 missed the objective): inconclusive")
		return false
	}
	if err != nil || rep.Knee == nil {
		t.Fatalf("sweep: %v, knee %+v\nstdout:\n%s", err, rep.Knee, out)
	}
	so := parseScaledObject(t, rep.KEDA)
	tr := so.Spec.Triggers[0].Metadata
	threshold, err := strconv.ParseFloat(tr["threshold"], 64)
	if err != nil || tr["query"] != rep.Trigger.Query || threshold != rep.Trigger.Threshold {
		t.Fatalf("snippet trigger %v, report's %+v (%v)", tr, rep.Trigger, err)
	}
	t.Logf("knee %d (TPOT p95 %.1f ms); trigger %s > %g on %s; warning %q",
		rep.Knee.Concurrency, rep.Knee.TPOTp95ms, tr["query"], threshold, rep.Trigger.Series, rep.Trigger.Warning)

	prom.WaitForSeries(t, `up{job="sim"}`, 1, 30*time.Second)
	quantile := `max(histogram_quantile(0.95, sum by (le) (rate(vllm:request_time_per_output_token_seconds_bucket{model_name="keda"}[6s]))))`
	read := func(c int) (float64, float64) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		p, err := probe.New(probe.Options{URL: url, Model: "keda", MaxTokens: 16, Concurrency: c,
			Limits: probe.Limits{MaxConcurrency: c, MaxPerMinute: probe.AbsoluteMaxPerMinute}})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var tpots []float64
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			p.DoScheduled(ctx, 0, func(r *probe.Result) {
				if d, ok := r.TPOT(); ok {
					mu.Lock()
					tpots = append(tpots, d.Seconds())
					mu.Unlock()
				}
			})
		}()
		defer func() { cancel(); <-done; p.Close() }()
		// KEDA's instant query, once the rate window holds nothing but
		// this load: a scrape a window and two intervals after its start.
		deadline := time.Now().Add(time.Minute)
		for prom.ScrapeTime(t, `up{job="sim"}`, time.Time{}).Before(start.Add(window + 2*promtest.ScrapeInterval)) {
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus did not scrape for a minute:\n%s", prom.Log())
			}
			time.Sleep(100 * time.Millisecond)
		}
		res := prom.Query(t, tr["query"], time.Time{})
		if len(res) != 1 {
			t.Fatalf("at concurrency %d the trigger's query gave %d samples, KEDA wants one: %+v", c, len(res), res)
		}
		old := prom.Query(t, quantile, time.Time{})
		mu.Lock()
		clientP95 := telemetry.SampleQuantile(0.95, tpots) * 1000
		mu.Unlock()
		oldV := -1.0
		if len(old) == 1 {
			oldV = old[0].Value
		}
		t.Logf("concurrency %d: trigger reads %.4g (threshold %g); histogram_quantile reads %.4g s; client TPOT p95 %.1f ms",
			c, res[0].Value, threshold, oldV, clientP95)
		return res[0].Value, clientP95
	}
	light := max(1, rep.Knee.Concurrency/4)
	if v, p95 := read(light); !(v < threshold) {
		t.Errorf("at a quarter of the knee (%d streams, client TPOT p95 %.1f ms) the trigger reads %g, not below its threshold %g: KEDA would scale out",
			light, p95, v, threshold)
	}
	v, p95 := read(2 * rep.Knee.Concurrency)
	// Past the knee as the clients measured it, and, where the sweep
	// warned that the buckets cannot resolve the knee, past the bound it
	// named: the trigger promises no more.
	if p95 < 1.25*rep.Knee.TPOTp95ms || rep.Trigger.Warning != "" && p95 < 1.1*rep.Trigger.BoundMS {
		t.Logf("twice the knee ran at client TPOT p95 %.1f ms (the knee's %.1f ms, the bound %g ms): not past them, inconclusive",
			p95, rep.Knee.TPOTp95ms, rep.Trigger.BoundMS)
		return false
	}
	if !(v > threshold) {
		t.Errorf("at twice the knee (%d streams, client TPOT p95 %.1f ms) the trigger reads %g, not above its threshold %g: KEDA would not scale out",
			2*rep.Knee.Concurrency, p95, v, threshold)
	}
	if !strings.HasPrefix(tr["query"], "1 - sum(rate(vllm:request_time_per_output_token_seconds_bucket{") {
		t.Errorf("query %s: want the share of requests over a bucket bound", tr["query"])
	}
	return true
}
