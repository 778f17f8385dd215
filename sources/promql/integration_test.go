//go:build integration

package promql

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestIntegrationRealPrometheus runs the default queries against a real
// Prometheus scraping the simulator through a recording proxy, and checks
// the discovered endpoints and that the histogram windows and rates agree
// with the simulator's own counters in exactly the scrapes Prometheus got.
func TestIntegrationRealPrometheus(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	target := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 7})
	models := map[string]bool{}
	for _, m := range target.Models() {
		models[m.Name] = true
	}

	// Prometheus scrapes the simulator through a proxy that keeps the
	// counters of every scrape.
	snaps := &snapshots{}
	proxy := httptest.NewServer(snaps.recordingProxy(t, target.URL()+"/metrics"))
	defer proxy.Close()

	prom := promtest.Start(t, promtest.Target{Job: "vllm", URL: proxy.URL + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, "vllm:num_requests_running", len(models), 30*time.Second)
	dataFrom := time.Now()

	const step = 2 * time.Second
	cfg := Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: step,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}
	// Let Prometheus hold more than the backfill and the rate window.
	time.Sleep(time.Until(dataFrom.Add(cfg.Backfill + 3*time.Second)))

	rec := &recorder{}
	s, err := New(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshOnce(ctx); err != nil {
		t.Fatalf("RefreshOnce: %v", err)
	}
	queried := time.Now()
	// A scrape that fails under load (the timeout is 1s) makes Prometheus
	// mark the target's series stale: that histogram step has no point, the
	// window after it spans the gap (histogram.go), and the run of windows
	// one step each is cut there.
	minRun := 2
	if up := prom.Query(t, fmt.Sprintf(`min_over_time(up{job="vllm"}[%dms])`, (cfg.Backfill+2*step).Milliseconds()), queried); len(up) == 1 && up[0].Value == 0 {
		t.Log("a scrape failed in the backfilled span: a run of one window is enough")
		minRun = 1
	}
	st := rec.status(t)
	if st.State != telemetry.Live || len(st.Warnings) != 0 {
		t.Errorf("status %+v: want live, no warnings", st)
	}
	if fmt.Sprint(st.Recognised) != "[vllm]" {
		t.Errorf("recognised families %v, want [vllm]", st.Recognised)
	}

	// Each model is an aggregate endpoint with one replica, the simulator's
	// instance.
	instance := strings.TrimPrefix(proxy.URL, "http://")
	replicas := map[string]string{}
	for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
		switch {
		case o.Info.Engine != telemetry.EngineVLLM:
			t.Errorf("unexpected endpoint %+v", *o.Info)
		case o.Info.Group != "":
			if !slices.ContainsFunc(target.Models(), func(m sim.ModelSpec) bool { return m.Name == o.Info.Group }) || o.Info.Replica != instance || o.Endpoint != instance+"/"+o.Info.Group {
				t.Errorf("unexpected replica %+v", *o.Info)
			}
			replicas[o.Info.Group] = o.Endpoint
		case models[o.Endpoint] && o.Info.Aggregate:
			delete(models, o.Endpoint)
		}
	}
	if len(models) != 0 || len(replicas) != len(target.Models()) {
		t.Errorf("models not discovered as aggregates: %v; replicas %v", models, replicas)
	}

	t.Run("agrees with direct scrape", func(t *testing.T) {
		checkScrapeAgreement(ctx, t, rec, snaps, prom, target.Models(), step)
	})
	for _, m := range target.Models() {
		model := m.Name
		for _, name := range []string{model, replicas[model]} {
			t.Run(name, func(t *testing.T) {
				scrapeAt := func(at time.Time) snapshot {
					return snaps.nearest(t, prom.ScrapeTime(t, fmt.Sprintf("vllm:num_requests_running{model_name=%q}", model), at))
				}
				for _, sig := range []telemetry.Signal{telemetry.ITL, telemetry.TTFT, telemetry.TPOT, telemetry.E2E} {
					compareWindows(t, rec, scrapeAt, name, model, sig, step, minRun)
				}
				// Gauges are dated by their newest sample, not by the query.
				tps := rec.find(telemetry.KindSample, name, telemetry.OutputTPS)
				if len(tps) != 1 {
					t.Fatalf("output tok/s: %+v", tps)
				}
				end := tps[0].At
				ingested := prom.SampleTimes(t, fmt.Sprintf("vllm:num_requests_running{model_name=%q}", model), queried, 30*time.Second)
				if !slices.ContainsFunc(ingested, end.Equal) {
					t.Errorf("gauge dated %s, not the time of an ingested scrape (%v)", end, ingested)
				}
				// Output tok/s: rate(generation_tokens_total[10s]) against the
				// simulator's counters in the scrapes Prometheus ingested, with
				// rate()'s extrapolation.
				series := fmt.Sprintf("vllm:generation_tokens_total{model_name=%q}", model)
				// Instant queries are evaluated at Prometheus' "now" while the
				// refresh runs: after it began (the status is dated by its
				// start) and before it reported, Latency later.
				status := rec.find(telemetry.KindSource, "", "")[0]
				refreshTook := time.Duration(0)
				if status.Status != nil {
					refreshTook = status.Status.Latency
				}
				var want float64
				var pts []ratePoint
				matched := false
				for off := -100 * time.Millisecond; off <= refreshTook+100*time.Millisecond && !matched; off += 25 * time.Millisecond {
					evalAt := status.At.Add(off)
					pts = pts[:0]
					for _, ts := range prom.SampleTimes(t, series, evalAt, cfg.Window) {
						pts = append(pts, ratePoint{ts, snaps.nearest(t, ts).tokens[model]})
					}
					want = promRate(pts, evalAt, cfg.Window)
					// A scrape Prometheus had started but not yet committed
					// at the evaluation is dated before it, yet not read.
					pending := math.NaN()
					if n := len(pts); n > 2 && evalAt.Sub(pts[n-1].t) < promtest.ScrapeInterval { // the scrape timeout
						pending = promRate(pts[:n-1], evalAt, cfg.Window)
					}
					// Candidates are 25ms apart: the extrapolation to the window's
					// end moves the rate by at most 0.125% between two of them.
					// A missed scrape leaves an edge gap, where it depends more on
					// the evaluation time.
					tol := 0.005
					if len(pts) < int(cfg.Window/promtest.ScrapeInterval) {
						tol = 0.06 // measured up to 3.1% on a loaded 2-core runner
					}
					matched = within(tps[0].Value, want, tol) || within(tps[0].Value, pending, tol)
				}
				t.Logf("output tok/s: promql %.2f, counters %.2f (%d scrapes, refresh took %v)", tps[0].Value, want, len(pts), refreshTook)
				if !matched {
					t.Errorf("output tok/s %.2f, counters say %.2f at every instant of the refresh", tps[0].Value, want)
				}
				run := rec.find(telemetry.KindSample, name, telemetry.Running)
				if len(run) != 1 || run[0].Value < 0 || run[0].Value > 4 {
					t.Errorf("running %+v, want one value in [0, 4] (load 4)", run)
				}
				if kv := rec.find(telemetry.KindSample, name, telemetry.KVCache); len(kv) != 1 || kv[0].Value < 0 || kv[0].Value > 1 {
					t.Errorf("kv cache %+v, want a ratio", kv)
				}
			})
		}
	}
}

// compareWindows sums the PromQL windows of a signal and compares them
// with the simulator's counters in the scrapes at the span's edges: the
// windows are exact differences, so counts and quantiles must be equal.
func compareWindows(t *testing.T, rec *recorder, scrapeAt func(time.Time) snapshot, name, model string, sig telemetry.Signal, step time.Duration, minRun int) {
	t.Helper()
	all := rec.find(telemetry.KindHistogram, name, sig)
	hs := lastRun(all, step)
	if len(hs) < minRun || len(all) > 5 {
		t.Fatalf("%s: %d windows, the last %d contiguous; want at most the backfill's 5, at least %d in a row", sig, len(all), len(hs), minRun)
	}
	if len(hs) < len(all) {
		t.Logf("%s: %d of %d windows contiguous (a scrape failed on the busy machine)", sig, len(hs), len(all))
	}
	var total []telemetry.Bucket
	for _, h := range hs {
		total = addBuckets(total, h.Buckets)
	}
	from, to := hs[0].At.Add(-step), hs[len(hs)-1].At
	want := subBuckets(scrapeAt(to).hist[sig][model], scrapeAt(from).hist[sig][model])
	gotN, wantN := total[len(total)-1].Count, want[len(want)-1].Count
	t.Logf("%s over %s: promql %.0f observations, counters %.0f", sig, to.Sub(from), gotN, wantN)
	if gotN != wantN || gotN == 0 && sig == telemetry.ITL {
		t.Errorf("%s: %.0f observations, counters say %.0f (want equal, and traffic)", sig, gotN, wantN)
	}
	for _, q := range []float64{0.5, 0.9, 0.99} {
		g, w := telemetry.HistogramQuantile(q, total), telemetry.HistogramQuantile(q, want)
		if !within(g, w, 1e-9) && !(math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("%s p%g: promql %.4f, counters %.4f", sig, q*100, g, w)
		}
	}
}

type ratePoint struct {
	t time.Time
	v float64
}

// promRate is Prometheus' rate() of counter samples in (at−window, at]
// (promql/functions.go extrapolatedRate, without resets): the increase
// from the first to the last sample, extrapolated towards the window's edges
// when they are within 1.1 average sample intervals (else by half an
// interval), and not below the counter's zero point.
func promRate(pts []ratePoint, at time.Time, window time.Duration) float64 {
	if len(pts) < 2 {
		return math.NaN()
	}
	first, last := pts[0], pts[len(pts)-1]
	delta := last.v - first.v
	sampled := last.t.Sub(first.t).Seconds()
	toStart := first.t.Sub(at.Add(-window)).Seconds()
	toEnd := at.Sub(last.t).Seconds()
	avg := sampled / float64(len(pts)-1)
	if delta > 0 && first.v >= 0 {
		toStart = min(toStart, sampled*(first.v/delta))
	}
	extrapolated := sampled
	for _, d := range []float64{toStart, toEnd} {
		if d < avg*1.1 {
			extrapolated += d
		} else {
			extrapolated += avg / 2
		}
	}
	return delta * (extrapolated / sampled) / window.Seconds()
}

// lastRun returns the last run of windows that follow each other step
// apart: a failed scrape leaves a gap, whose observations the window after
// it holds, over more than one step.
func lastRun(hs []telemetry.Observation, step time.Duration) []telemetry.Observation {
	i := len(hs) - 1
	for i > 0 && hs[i].At.Sub(hs[i-1].At) == step {
		i--
	}
	return hs[max(i, 0):]
}

func addBuckets(a, b []telemetry.Bucket) []telemetry.Bucket {
	if a == nil {
		return append([]telemetry.Bucket(nil), b...)
	}
	out := append([]telemetry.Bucket(nil), a...)
	for i := range out {
		for _, x := range b {
			if x.UpperBound == out[i].UpperBound {
				out[i].Count += x.Count
			}
		}
	}
	return out
}

func subBuckets(a, b []telemetry.Bucket) []telemetry.Bucket {
	out := append([]telemetry.Bucket(nil), a...)
	for i := range out {
		for _, x := range b {
			if x.UpperBound == out[i].UpperBound {
				out[i].Count -= x.Count
			}
		}
	}
	return out
}

// snapshot is the simulator's cumulative counters at one time.
type snapshot struct {
	at     time.Time
	body   []byte
	ctype  string
	hist   map[telemetry.Signal]map[string][]telemetry.Bucket // signal → model → cumulative buckets
	tokens map[string]float64
}

type snapshots struct {
	mu   sync.Mutex
	list []snapshot
}

// recordingProxy serves the simulator's /metrics to Prometheus and keeps
// the counters of each scrape, dated when the request arrived.
func (s *snapshots) recordingProxy(t *testing.T, url string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		body, ctype, err := fetch(r.Context(), url)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		// Answer first (the scrape timeout is 1s on a busy machine),
		// then parse: with its length given and flushed, the answer is
		// complete before the handler returns.
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if _, err := w.Write(body); err != nil {
			t.Logf("serving metrics to prometheus (a timed-out scrape?): %v", err)
		}
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Logf("flushing metrics to prometheus: %v", err)
		}
		snap, err := parseSnapshot(body)
		if err != nil {
			t.Errorf("parsing the simulator's metrics: %v", err)
		}
		snap.at, snap.body, snap.ctype = arrived, body, ctype
		s.mu.Lock()
		s.list = append(s.list, snap)
		s.mu.Unlock()
	})
}

// nearest returns the scrape that arrived closest after the scrape start
// at (Prometheus dates samples by the scrape's start).
func (s *snapshots) nearest(t *testing.T, at time.Time) snapshot {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *snapshot
	for i := range s.list {
		if d := s.list[i].at.Sub(at); d >= 0 && (best == nil || d < best.at.Sub(at)) {
			best = &s.list[i]
		}
	}
	if best == nil || best.at.Sub(at) > 300*time.Millisecond {
		t.Fatalf("no recorded scrape just after %s", at)
	}
	return *best
}

func fetch(ctx context.Context, url string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	body, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return body, resp.Header.Get("Content-Type"), err
}

var (
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$`)
	labelRE  = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// parseSnapshot reads the histogram buckets and token counters of a vLLM
// /metrics body (enough of the text format for the simulator's output).
func parseSnapshot(body []byte) (snapshot, error) {
	snap := snapshot{hist: map[telemetry.Signal]map[string][]telemetry.Bucket{}, tokens: map[string]float64{}}
	families := map[string]telemetry.Signal{
		"vllm:inter_token_latency_seconds_bucket":           telemetry.ITL,
		"vllm:time_to_first_token_seconds_bucket":           telemetry.TTFT,
		"vllm:request_time_per_output_token_seconds_bucket": telemetry.TPOT,
		"vllm:e2e_request_latency_seconds_bucket":           telemetry.E2E,
	}
	for _, line := range strings.Split(string(body), "\n") {
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			labels[l[1]] = l[2]
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return snapshot{}, fmt.Errorf("value %q: %w", m[3], err)
		}
		model := labels["model_name"]
		if m[1] == "vllm:generation_tokens_total" {
			snap.tokens[model] += v
		}
		sig, ok := families[m[1]]
		if !ok {
			continue
		}
		le, err := strconv.ParseFloat(labels["le"], 64)
		if err != nil {
			return snapshot{}, fmt.Errorf("le %q: %w", labels["le"], err)
		}
		if snap.hist[sig] == nil {
			snap.hist[sig] = map[string][]telemetry.Bucket{}
		}
		snap.hist[sig][model] = append(snap.hist[sig][model], telemetry.Bucket{UpperBound: le, Count: v})
	}
	for _, byModel := range snap.hist {
		for _, bs := range byModel {
			sort.Slice(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
		}
	}
	return snap, nil
}
