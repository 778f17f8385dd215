//go:build integration

package promql

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

// engineTarget is one growing page Prometheus scrapes.
type engineTarget struct {
	job    string
	engine telemetry.Engine
	page   *growingPage
	srv    *httptest.Server
}

func (e *engineTarget) instance() string { return strings.TrimPrefix(e.srv.URL, "http://") }

// engineTargets serves every engine's page: the real captures in
// internal/fixtures/testdata/metrics, and for every engine a page
// generated from the alias table (synthPage) with the current names, which
// the captures of NIM and llama.cpp lack and TensorRT-LLM and LMDeploy have
// no capture of.
func engineTargets(t *testing.T) []*engineTarget {
	t.Helper()
	var out []*engineTarget
	add := func(job string, e telemetry.Engine, body string) {
		p := newGrowingPage(body)
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		out = append(out, &engineTarget{job: job, engine: e, page: p, srv: srv})
	}
	for _, c := range []struct {
		file string
		e    telemetry.Engine
	}{
		{"vllm-v0.4-metrics.txt", telemetry.EngineVLLM},
		{"vllm-v0.10-metrics.txt", telemetry.EngineVLLM},
		{"vllm-v0.27-xpu-specdecode-mfu-metrics.txt", telemetry.EngineVLLM},
		{"sglang-metrics.txt", telemetry.EngineSGLang},
		{"tgi-metrics-excerpt.txt", telemetry.EngineTGI},
		{"triton-metrics-excerpt.txt", telemetry.EngineTriton},
		{"nim-llama3.1-8b-metrics.txt", telemetry.EngineNIM},
		{"ik-llamacpp-server-metrics.txt", telemetry.EngineLlamaCpp},
		{"dynamo-frontend-qwen3-0.6b-metrics.txt", telemetry.EngineDynamo},
		{"dynamo-trtllm-worker-qwen3-0.6b-metrics.txt", telemetry.EngineTRTLLM},
	} {
		add(strings.TrimSuffix(c.file, ".txt"), c.e, fixtures.Read(t, "metrics", c.file))
	}
	// TGI's and Triton's pages again, generated, for the aliases the
	// excerpts lack: TGI's generated-tokens histogram sum (HistogramSum),
	// Triton's TRT-LLM backend gauges with label matches.
	// vLLM's and SGLang's generated pages carry the current names the
	// captures predate: NIXL and P/D transfer families, waiting reasons,
	// prompt-token sources.
	for _, e := range []telemetry.Engine{telemetry.EngineNIM, telemetry.EngineTRTLLM, telemetry.EngineLlamaCpp, telemetry.EngineLMDeploy,
		telemetry.EngineTGI, telemetry.EngineTriton, telemetry.EngineDynamo, telemetry.EngineVLLM, telemetry.EngineSGLang, telemetry.EngineLLMD} {
		spec, _ := engines.Lookup(e)
		add("synth-"+string(e), e, synthPage(spec, "synth-"+string(e)))
	}
	// vLLM 0.10 (per-step ITL, no per-request TPOT histogram) with
	// speculative decoding on: the capture plus the spec-decode counters
	// vLLM registers then. Its ITL mean is a step time, so no TPOT is
	// derived from it.
	// (A model name of its own, so it is not a replica of the capture's.)
	const spec = "qwen3-4b-specdecode"
	add("vllm-v0.10-specdecode", telemetry.EngineVLLM, strings.ReplaceAll(fixtures.Read(t, "metrics", "vllm-v0.10-metrics.txt"),
		"Qwen/Qwen3-4B-Instruct-2507-FP8", spec)+"\n"+strings.ReplaceAll(`# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="Qwen/Qwen3-4B-Instruct-2507-FP8"} 40
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="Qwen/Qwen3-4B-Instruct-2507-FP8"} 80
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="Qwen/Qwen3-4B-Instruct-2507-FP8"} 60
`, "Qwen/Qwen3-4B-Instruct-2507-FP8", spec))
	// A TensorRT-LLM worker behind NVIDIA Dynamo: its trtllm_ names only (no shared,
	// unprefixed name, so no claim by markers applies).
	dynamo, _ := engines.Lookup(telemetry.EngineTRTLLM)
	for sig, aliases := range dynamo.Signals {
		var keep []engines.Alias
		for _, a := range aliases {
			if strings.HasPrefix(a.Name, "trtllm_") {
				keep = append(keep, a)
			}
		}
		dynamo.Signals[sig] = keep
		if len(keep) == 0 {
			delete(dynamo.Signals, sig)
		}
	}
	dynamo.Errors, dynamo.Markers = dynamo.Errors[1:], nil
	add("synth-dynamo-trtllm", telemetry.EngineTRTLLM, synthPage(dynamo, "synth-dynamo-trtllm"))
	// TensorRT-LLM with the KV-block counters and no cached-prompt token
	// counter: its prefix hit is the later alias, reused / (reused + missed).
	blocks, _ := engines.Lookup(telemetry.EngineTRTLLM)
	hit := blocks.Signals[telemetry.PrefixCacheHit]
	for len(hit) > 0 && hit[0].Type != engines.CounterShare {
		hit = hit[1:]
	}
	if len(hit) == 0 {
		t.Fatal("TensorRT-LLM has no CounterShare prefix-hit alias")
	}
	blocks.Signals[telemetry.PrefixCacheHit] = hit
	add("synth-trtllm-blocks", telemetry.EngineTRTLLM, synthPage(blocks, "synth-trtllm-blocks"))
	return out
}

// TestIntegrationEveryEngine has a real Prometheus scrape every engine's
// page (growing at each scrape) at once, NIM and TensorRT-LLM (which share
// unprefixed names) included, and checks for each target that PromQL mode
// finds its engine and yields every signal a direct scrape of the same
// pages yields, with equal figures: histogram windows bucket by bucket,
// gauges, counter ratios and error rates exactly, counter rates within
// rate()'s extrapolation; plus the TPOT derived from the ITL mean where
// the engine has no TPOT histogram.
func TestIntegrationEveryEngine(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx := context.Background()
	targets := engineTargets(t)
	var pts []promtest.Target
	for _, e := range targets {
		pts = append(pts, promtest.Target{Job: e.job, URL: e.srv.URL + "/metrics"})
	}
	prom := promtest.Start(t, pts...)
	prom.WaitTargetsUp(t, 30*time.Second)
	const step = 2 * time.Second
	cfg := Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: step,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}
	// Prometheus holds more than the backfill and the rate window.
	waitScrapes(t, prom, len(targets), int((cfg.Backfill+4*time.Second)/promtest.ScrapeInterval))

	rec := &recorder{}
	s, err := New(cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	// The first refresh lists the names; the second runs the detected
	// engines' queries only.
	for range 2 {
		rec.Reset()
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
	}
	st := rec.status(t)
	if got, want := fmt.Sprint(st.Recognised), "[vllm sglang lmdeploy llamacpp tgi triton nim trtllm dynamo llm-d]"; got != want {
		t.Errorf("recognised %s, want %s", got, want)
	}
	t.Logf("status: %s; refresh took %s; warnings %v", st.Description, st.Latency, st.Warnings)
	// The figures are compared from a refresh whose rate windows hold no
	// failed scrape: one that failed under load (the big fixture pages,
	// the race detector) leaves the target's series stale, or an edge gap
	// that rate() extrapolates by half an interval.
	// Each compared refresh also comes a histogram step's scrapes after
	// the refresh before it, so that a step has ended between them and it
	// has windows to compare (two quick refreshes on a loaded machine
	// were seen within one step: no windows).
	pages := int((cfg.Backfill + 8*time.Second) / promtest.ScrapeInterval)
	for try := 1; ; try++ {
		rec.Reset()
		pages = max(pages, pagesServed(t, prom)+int(step/promtest.ScrapeInterval)+1)
		waitScrapes(t, prom, len(targets), pages)
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
		span := cfg.Window + 2*promtest.ScrapeInterval
		failed := prom.Query(t, fmt.Sprintf("min_over_time(up[%dms]) == 0", span.Milliseconds()), time.Time{})
		if len(failed) == 0 {
			break
		}
		if try == 3 {
			t.Fatalf("a scrape failed within the rate window of %d refreshes in a row: %+v", try, failed)
		}
		t.Logf("refresh %d: a scrape failed within its rate window (%+v): taking the next one", try, failed)
		pages += int(span / promtest.ScrapeInterval)
	}
	eps := s.state.reg.all()
	hitShare := map[string]bool{"synth-llamacpp": true, "synth-trtllm-blocks": true}
	for _, tgt := range targets {
		t.Run(tgt.job, func(t *testing.T) {
			var reps []*endpointState
			for _, e := range eps {
				if e.aggregate != nil && e.info.Labels["instance"] == tgt.instance() {
					reps = append(reps, e)
				}
			}
			if len(reps) == 0 {
				t.Fatalf("no replica of instance %s among %d endpoints", tgt.instance(), len(eps))
			}
			for _, r := range reps {
				if r.info.Engine != tgt.engine {
					t.Errorf("%s: engine %s, want %s", r.info.Name, r.info.Engine, tgt.engine)
				}
				// What the engine can never give is said as a direct
				// scrape says it: TGI has no TTFT histogram.
				if got := r.info.Unmeasurable; !maps.Equal(got, engines.Unmeasurable(tgt.engine)) ||
					tgt.engine == telemetry.EngineTGI && got[telemetry.TTFT] != "TGI exposes no TTFT histogram" {
					t.Errorf("%s: unmeasurable %v", r.info.Name, got)
				}
				checkAgainstDirect(ctx, t, prom, rec, tgt, r, step)
				// The hit rates over a sum: synthPage's 30 hits and 100
				// of the other outcome per page.
				if hitShare[tgt.job] {
					if v := promqlValue(t, rec.All(), r.info.Name, telemetry.PrefixCacheHit); !within(v, 30.0/130, 1e-9) {
						t.Errorf("%s: prefix hit %v, want 30/(30+100)", r.info.Name, v)
					}
				}
			}
		})
	}
}

// waitScrapes polls until every target has served n pages.
// pagesServed is the most pages a target has served, as Prometheus last
// scraped them.
func pagesServed(t *testing.T, prom *promtest.Server) int {
	t.Helper()
	ss := prom.Query(t, "max("+scrapeIndexGauge+")", time.Time{})
	if len(ss) != 1 {
		t.Fatalf("pages served: %v", ss)
	}
	return int(ss[0].Value)
}

func waitScrapes(t *testing.T, prom *promtest.Server, targets, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Duration(n)*promtest.ScrapeInterval + 30*time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ss := prom.Query(t, scrapeIndexGauge+" >= "+fmt.Sprint(n), time.Time{})
		if len(ss) == targets {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d targets served %d pages", len(ss), targets, n)
		}
		<-tick.C
	}
}

// checkAgainstDirect compares one replica's PromQL figures with a direct
// scrape of the pages Prometheus held at the edges of its windows.
func checkAgainstDirect(ctx context.Context, t *testing.T, prom *promtest.Server, rec *recorder, tgt *engineTarget, r *endpointState, step time.Duration) {
	t.Helper()
	all := rec.All()
	var first, last time.Time
	for _, o := range all {
		if o.Endpoint == r.info.Name && o.Kind == telemetry.KindHistogram {
			if first.IsZero() || o.At.Before(first) {
				first = o.At
			}
			if o.At.After(last) {
				last = o.At
			}
		}
	}
	pageAt := func(at time.Time) int {
		ss := prom.Query(t, fmt.Sprintf("%s{instance=%q}", scrapeIndexGauge, tgt.instance()), at)
		if len(ss) != 1 {
			t.Fatalf("page at %s: %v", at, ss)
		}
		return int(ss[0].Value)
	}
	from, to := first.Add(-step), last
	var kFrom, kTo int
	if first.IsZero() {
		// Values only (Triton models without the TTFT histogram): pages
		// grow linearly, so any two pages give the same means and rates.
		kTo = pageAt(time.Time{})
		kFrom = kTo - 4
	} else {
		kFrom, kTo = pageAt(from), pageAt(to)
	}

	// Direct scrape of the same two pages, its clock one second per page.
	replay := &replayTarget{}
	srv := httptest.NewServer(replay)
	defer srv.Close()
	clock := time.Unix(1_700_000_000, 0)
	direct := &recorder{}
	sc := scrape.New(scrape.Config{URL: srv.URL, Name: "direct", Now: func() time.Time { return clock }}, direct)
	for _, k := range []int{kFrom, kTo} {
		replay.set([]byte(tgt.page.page(k)), "text/plain; version=0.0.4")
		if err := sc.ScrapeOnce(ctx); err != nil {
			t.Fatalf("direct scrape: %v", err)
		}
		clock = clock.Add(time.Duration(kTo-kFrom) * time.Second)
	}
	dname := ""
	for _, o := range direct.find(telemetry.KindEndpoint, "", "") {
		if o.Info.Model == r.info.Model || len(r.info.Labels["model_from"]) > 0 {
			dname = o.Endpoint
		}
	}
	if dname == "" {
		t.Fatalf("%s: direct scrape has no endpoint of model %q", r.info.Name, r.info.Model)
	}
	want := signalsWithData(direct.All(), dname)
	delete(want, telemetry.MBU) // an estimate from a bandwidth model: not in PromQL mode
	got := signalsWithData(all, r.info.Name)
	for sig := range want {
		if !got[sig] {
			t.Errorf("%s: %s from direct scrape, not from PromQL (PromQL has %v)", r.info.Name, sig, keys(got))
		}
	}
	for sig := range got {
		if !want[sig] && !(sig == telemetry.TPOT && derivedOnly(all, r.info.Name, sig)) {
			t.Errorf("%s: %s from PromQL only", r.info.Name, sig)
		}
	}
	t.Logf("%s: pages %d→%d, signals %v", r.info.Name, kFrom, kTo, keys(got))
	for sig := range want {
		compareSignal(t, all, direct.All(), r.info.Name, dname, sig, from, to)
	}
	// Every engine with a per-token histogram and no per-request TPOT one
	// (TensorRT-LLM's time_per_output_token is per request: its own TPOT).
	// Not from a per-step histogram under speculative decoding: the
	// generated LMDeploy page has its spec-decode counters, and
	// vllm-v0.10-specdecode is 0.10 with them. SGLang's ITL is per token
	// even then (its generated page has the spec gauges).
	derivedWanted := map[string]bool{"vllm-v0.4-metrics": true, "vllm-v0.10-metrics": true, "sglang-metrics": true,
		"nim-llama3.1-8b-metrics": true, "synth-nim": true, "synth-dynamo": true, "dynamo-frontend-qwen3-0.6b-metrics": true, "synth-sglang": true}
	if derivedWanted[tgt.job] != derivedOnly(all, r.info.Name, telemetry.TPOT) {
		t.Errorf("%s: TPOT derived from the ITL mean: %v, want %v", r.info.Name, !derivedWanted[tgt.job], derivedWanted[tgt.job])
	}
	if derivedOnly(all, r.info.Name, telemetry.TPOT) {
		if r.info.Labels["tpot_derived"] == "" {
			t.Errorf("%s: derived TPOT not said in the endpoint's labels: %v", r.info.Name, r.info.Labels)
		}
		// The derived TPOT is the ITL mean over the rate window; the
		// pages grow linearly, so it equals the direct ITL increments' mean.
		itl := directOne(t, direct.All(), dname, telemetry.ITL, telemetry.KindHistogram)
		mean := itl.Value / itl.Buckets[len(itl.Buckets)-1].Count
		if v := promqlValue(t, all, r.info.Name, telemetry.TPOT); !within(v, mean, 1e-9) {
			t.Errorf("%s: derived TPOT %v, direct ITL mean %v", r.info.Name, v, mean)
		}
	}
}

// compareSignal compares one signal's PromQL and direct figures.
func compareSignal(t *testing.T, pq, dir []telemetry.Observation, pname, dname string, sig telemetry.Signal, from, to time.Time) {
	t.Helper()
	d := directOne(t, dir, dname, sig, "")
	if telemetry.IsEngineSignal(sig) && d.Kind == telemetry.KindSample {
		if p := promqlSample(t, pq, pname, sig); p.Approx != d.Approx {
			t.Errorf("%s %s: PromQL approximate %v, direct %v", pname, sig, p.Approx, d.Approx)
		}
	}
	switch {
	case d.Kind == telemetry.KindHistogram && sig == telemetry.ErrorRate:
		wantRate := d.Value / d.Buckets[len(d.Buckets)-1].Count
		if v := promqlValue(t, pq, pname, sig); !within(v, wantRate, 1e-9) {
			t.Errorf("%s error rate %v, direct %v", pname, v, wantRate)
		}
	case d.Kind == telemetry.KindHistogram:
		var sum []telemetry.Bucket
		var total float64
		for _, o := range pq {
			if o.Endpoint == pname && o.Signal == sig && o.Kind == telemetry.KindHistogram && o.At.After(from) && !o.At.After(to) {
				sum = addBuckets(sum, o.Buckets)
				total += o.Value
			}
		}
		if !closeBuckets(sum, d.Buckets) || !within(total, d.Value, 1e-9) {
			t.Errorf("%s %s: PromQL windows %v (sum %v), direct %v (sum %v)", pname, sig, sum, total, d.Buckets, d.Value)
		}
	case d.Approx, telemetry.IsEngineSignal(sig) && !strings.HasSuffix(string(sig), "_per_s"):
		// Counter ratios and shares, and gauges: exact (the pages grow
		// linearly, so a ratio of rates over any window is the ratio of
		// the increments).
		if v := promqlValue(t, pq, pname, sig); !within(v, d.Value, 1e-9) {
			t.Errorf("%s %s: PromQL %v, direct %v", pname, sig, v, d.Value)
		}
	default:
		// Gauges are equal; counter rates are within rate()'s
		// extrapolation over real scrape intervals.
		if v := promqlValue(t, pq, pname, sig); !within(v, d.Value, 0.05) {
			t.Errorf("%s %s: PromQL %v, direct %v", pname, sig, v, d.Value)
		}
	}
}

func directOne(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal, kind telemetry.Kind) telemetry.Observation {
	t.Helper()
	var out []telemetry.Observation
	for _, o := range obs {
		if o.Endpoint == ep && o.Signal == sig && (o.Kind == telemetry.KindSample || o.Kind == telemetry.KindHistogram) && (kind == "" || o.Kind == kind) {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		t.Fatalf("direct %s %s: no observation", ep, sig)
	}
	return out[len(out)-1] // gauges are read at both scrapes: the last page's

}

func promqlValue(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal) float64 {
	t.Helper()
	return promqlSample(t, obs, ep, sig).Value
}

func promqlSample(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal) telemetry.Observation {
	t.Helper()
	for _, o := range obs {
		if o.Endpoint == ep && o.Signal == sig && o.Kind == telemetry.KindSample {
			return o
		}
	}
	t.Fatalf("PromQL %s %s: no value", ep, sig)
	return telemetry.Observation{Value: math.NaN()}
}

// derivedOnly reports whether sig's only figures are derived samples.
func derivedOnly(obs []telemetry.Observation, ep string, sig telemetry.Signal) bool {
	n := 0
	for _, o := range obs {
		if o.Endpoint == ep && o.Signal == sig {
			if o.Kind == telemetry.KindHistogram || o.Kind == telemetry.KindSample && !o.Approx {
				return false
			}
			if o.Kind == telemetry.KindSample {
				n++
			}
		}
	}
	return n > 0
}

func closeBuckets(a, b []telemetry.Bucket) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if !within(a[i].UpperBound, b[i].UpperBound, 1e-12) && a[i].UpperBound != b[i].UpperBound || math.Abs(a[i].Count-b[i].Count) > 1e-9 {
			return false
		}
	}
	return true
}

func keys(m map[telemetry.Signal]bool) []string {
	var out []string
	for k := range m {
		out = append(out, string(k))
	}
	sort.Strings(out)
	return out
}

// TestGeneratedQueriesRunOnBothStores runs every generated query, for
// every engine and with grouping labels, on real Prometheus and
// VictoriaMetrics (MetricsQL differs from PromQL in places): each must be
// accepted and within VictoriaMetrics' default -search.maxQueryLen.
func TestGeneratedQueriesRunOnBothStores(t *testing.T) {
	t.Parallel() // its own stores, each started and asked once
	if promtest.Binary() == "" || promtest.VictoriaMetricsBinary() == "" {
		t.Skip("prometheus or victoria-metrics binary not found: " + promtest.InstallHint)
	}
	const vmMaxQueryLen = 16384
	stores := map[string]*promtest.Server{"prometheus": promtest.Start(t), "victoria": promtest.StartVictoriaMetrics(t)}
	for name, store := range stores {
		for _, groupBy := range [][]string{nil, {"namespace", "cluster"}} {
			s, _ := newTestSource(t, Config{URL: store.URL, GroupBy: groupBy, Window: 5 * time.Minute})
			qs := s.state.queries
			var jobs []job
			for _, q := range qs.fresh {
				jobs = append(jobs, job{kind: instantJob, query: s.expand.expand(q)})
			}
			for _, q := range qs.lora {
				jobs = append(jobs, job{kind: instantJob, signal: loraSignal, query: s.expand.expand(q)})
			}
			for _, sig := range signalsOf(qs.value) {
				for _, q := range qs.value[sig] {
					jobs = append(jobs, job{kind: instantJob, signal: sig, query: s.expand.expand(q)})
				}
			}
			end := time.Now()
			for _, sig := range signalsOf(qs.hist) {
				for _, q := range qs.hist[sig] {
					jobs = append(jobs, job{kind: rangeJob, signal: sig, query: s.expand.expand(q),
						rng: v1.Range{Start: end.Add(-time.Minute), End: end, Step: 15 * time.Second}})
				}
			}
			for _, j := range jobs {
				if len(j.query) > vmMaxQueryLen {
					t.Errorf("%s (group by %v): %d bytes, over VictoriaMetrics' default limit", j.signal, groupBy, len(j.query))
				}
				if a := s.do(context.Background(), j); a.err != nil {
					t.Errorf("%s (group by %v) on %s: %v", j.signal, groupBy, name, a.err)
				}
			}
		}
	}
}
