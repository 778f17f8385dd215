package promql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// testConfig is a fast config for the fake API: step 10s, 3 windows of
// backfill.
func testConfig(url string) Config {
	return Config{URL: url, Window: time.Minute, ScrapeInterval: 5 * time.Second,
		HistogramStep: 10 * time.Second, Backfill: 30 * time.Second, Delay: time.Nanosecond, HTTP: httpclient.Config{Timeout: 2 * time.Second}}
}

func newTestSource(t *testing.T, cfg Config) (*Source, *recorder) {
	t.Helper()
	rec := &recorder{}
	s, err := New(cfg, rec)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, rec
}

// clockedSource is a source of testConfig on f, f and the source both on
// a fake clock starting at start.
func clockedSource(t *testing.T, f *fakeProm, start time.Time) (*Source, *recorder, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: start}
	f.set(func(f *fakeProm) { f.clock = clk.Now })
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.now = clk.Now
	return s, rec, clk
}

func TestEndpointsAndValuesFromResults(t *testing.T) {
	f := newFakeProm(t, "llama-8b", "qwen-7b")
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatalf("RefreshOnce: %v", err)
	}
	eps := rec.find(telemetry.KindEndpoint, "", "")
	if len(eps) != 2 {
		t.Fatalf("got %d endpoint announcements, want 2: %+v", len(eps), eps)
	}
	for _, o := range eps {
		if o.Info.Engine != telemetry.EngineVLLM || o.Info.Model != o.Endpoint || o.Info.Name != o.Endpoint {
			t.Errorf("endpoint info %+v: want engine vllm, model = name", *o.Info)
		}
	}
	checkValue := func(ep string, sig telemetry.Signal, want float64) {
		t.Helper()
		got := rec.find(telemetry.KindSample, ep, sig)
		if len(got) != 1 || got[0].Value != want {
			t.Errorf("%s %s: got %+v, want one sample %v", ep, sig, got, want)
		}
	}
	checkValue("llama-8b", telemetry.Running, 3)
	checkValue("qwen-7b", telemetry.Running, 4)
	checkValue("llama-8b", telemetry.Waiting, 1)
	checkValue("llama-8b", telemetry.KVCache, 0.25)
	checkValue("llama-8b", telemetry.OutputTPS, 120.5)
	checkValue("llama-8b", telemetry.ErrorRate, 0.01)

	// Gauges are dated by the freshness query (newest sample 2s old).
	g := rec.find(telemetry.KindSample, "llama-8b", telemetry.Running)[0]
	if age := time.Since(g.At); age < 1500*time.Millisecond || age > 10*time.Second {
		t.Errorf("running sample dated %s ago, want about 2s (freshness timestamp)", age)
	}

	hs := rec.find(telemetry.KindHistogram, "llama-8b", telemetry.TTFT)
	if len(hs) != 3 {
		t.Fatalf("got %d TTFT windows, want 3 (backfill 30s / step 10s)", len(hs))
	}
	want := []telemetry.Bucket{{UpperBound: 0.1, Count: 10}, {UpperBound: 0.5, Count: 30}, {UpperBound: math.Inf(1), Count: 40}}
	for i, h := range hs {
		if fmt.Sprint(h.Buckets) != fmt.Sprint(want) || h.Value != 8 || h.Interval != 10*time.Second {
			t.Errorf("window %d: %+v, want buckets %v, sum 8, interval 10s", i, h, want)
		}
		if h.At.UnixNano()%int64(10*time.Second) != 0 {
			t.Errorf("window end %s not aligned to the 10s step", h.At)
		}
		if i > 0 && h.At.Sub(hs[i-1].At) != 10*time.Second {
			t.Errorf("windows %s and %s do not tile", hs[i-1].At, h.At)
		}
	}
	// rank 20 lies half-way through the (0.1, 0.5] bucket.
	if q := telemetry.HistogramQuantile(0.5, hs[0].Buckets); math.Abs(q-0.3) > 1e-9 {
		t.Errorf("p50 of the window = %v, want 0.3", q)
	}
	// TPOT and ITL have no series in the fake: expected from vLLM, so no data.
	if nd := rec.find(telemetry.KindNoData, "llama-8b", telemetry.ITL); len(nd) != 1 {
		t.Errorf("ITL: got %d no-data observations, want 1", len(nd))
	}
	// No DCGM series: GPU bandwidth is not expected, so not reported.
	if got := rec.find(telemetry.KindNoData, "", telemetry.GPUMemBW); len(got) != 0 {
		t.Errorf("GPU bandwidth reported as no data without ever having data: %+v", got)
	}
	st := rec.status(t)
	if st.State != telemetry.Live || st.Err != "" || st.Kind != "promql" || st.LastOK.IsZero() {
		t.Errorf("status %+v, want live without error", st)
	}
	if len(rec.find(telemetry.KindFailure, "", "")) != 0 {
		t.Error("unexpected failures")
	}
	// Endpoints come before their values.
	all := rec.All()
	if all[0].Kind != telemetry.KindEndpoint || all[len(all)-1].Kind != telemetry.KindSource {
		t.Errorf("order: first %s, last %s; want endpoint first, source status last", all[0].Kind, all[len(all)-1].Kind)
	}
}

func TestGroupByNamesAndDCGMJoin(t *testing.T) {
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			path := r.URL.Path
			if strings.Contains(path, "/label/") {
				writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": []string{"vllm:num_requests_running", "DCGM_FI_PROF_DRAM_ACTIVE"}})
				return true
			}
			if !strings.HasSuffix(path, "/query") {
				return false
			}
			now := time.Now()
			var ss []fakeSeries
			switch {
			case strings.Contains(q, "DCGM_FI_PROF_DRAM_ACTIVE"): // first: it takes timestamps too (gpuOnce)
				ss = append(ss, fakeSeries{labels: map[string]string{"instance": "gpu-a:8000"}, value: 0.6})
			case strings.Contains(q, "timestamp("), strings.Contains(q, "vllm:num_requests_running"):
				for _, inst := range []string{"gpu-a:8000", "gpu-b:8000"} {
					ss = append(ss, fakeSeries{labels: map[string]string{"model_name": "llama", "instance": inst, "ttftop_engine": "vllm"}, value: 2})
				}
			}
			writeVector(w, now, ss, nil, nil)
			return true
		}
	})
	cfg := testConfig(f.URL())
	cfg.GroupBy = []string{"instance"}
	s, rec := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gpu-a:8000/llama", "gpu-b:8000/llama"} {
		e := rec.find(telemetry.KindEndpoint, name, "")
		if len(e) != 1 || e[0].Info.Labels["instance"] == "" {
			t.Errorf("endpoint %s: got %+v", name, e)
		}
	}
	if bw := rec.find(telemetry.KindSample, "gpu-a:8000/llama", telemetry.GPUMemBW); len(bw) != 1 || bw[0].Value != 0.6 {
		t.Errorf("gpu-a bandwidth: %+v, want 0.6", bw)
	}
	if bw := rec.find(telemetry.KindSample, "gpu-b:8000/llama", telemetry.GPUMemBW); len(bw) != 0 {
		t.Errorf("gpu-b got gpu-a's bandwidth: %+v", bw)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.queries {
		if strings.Contains(q, "vllm:time_to_first_token_seconds_bucket") && !strings.Contains(q, "timestamp(") && !strings.Contains(q, "sum by (le, model_name, pod, instance, llm_d_ai_role, worker_type)") {
			t.Errorf("histogram query not grouped by instance: %s", q)
		}
	}
}

func TestNaNAndEmptyAreNoData(t *testing.T) {
	f := newFakeProm(t, "llama")
	f.set(func(f *fakeProm) {
		f.values["running"] = math.NaN()
		f.values["kv"] = math.Inf(1)
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if strings.Contains(q, "vllm:num_requests_waiting") {
				writeVector(w, time.Now(), nil, nil, nil) // empty result
				return true
			}
			return false
		}
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []telemetry.Signal{telemetry.Running, telemetry.Waiting, telemetry.KVCache} {
		if got := rec.find(telemetry.KindSample, "llama", sig); len(got) != 0 {
			t.Errorf("%s: NaN/empty/Inf became a value: %+v", sig, got)
		}
		if got := rec.find(telemetry.KindNoData, "llama", sig); len(got) != 1 {
			t.Errorf("%s: got %d no-data observations, want 1", sig, len(got))
		}
	}
	if st := rec.status(t); st.State != telemetry.Live {
		t.Errorf("no data is not an error: status %+v", st)
	}
}

func TestQueryErrorsAreFailures(t *testing.T) {
	cases := []struct {
		name     string
		code     int
		ctype    string
		body     string
		want     []string
		wantNot  []string
		maxBytes int
	}{
		{"503 JSON timeout", 503, "application/json",
			`{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`,
			[]string{"timed out on the server", "503", "query timed out in expression evaluation"}, nil, 0},
		{"400 bad_data", 400, "application/json",
			`{"status":"error","errorType":"bad_data","error":"1:15: parse error: unexpected \"}\""}`,
			[]string{"bad_data", "parse error"}, nil, 0},
		{"HTML 502 from a proxy", 502, "text/html",
			"<html><head><title>502 Bad Gateway\x1b[31m</title></head><body><center><h1>502 Bad Gateway</h1></center>" + strings.Repeat("<p>padding</p>", 200) + "</body></html>",
			[]string{"502", "HTML page", "502 Bad Gateway"}, []string{"\x1b", "padding"}, maxErrLen},
		{"plain 500 with control bytes", 500, "text/plain", "boom\rFAKE\x1b]0;pwned\x07" + strings.Repeat("x", 2000),
			[]string{"500", `boom FAKE\x1b]0;pwned\x07`}, []string{"\r", "\x1b"}, maxErrLen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProm(t, "llama")
			f.set(func(f *fakeProm) {
				f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
					// The waiting gauge itself, not waiting_by_reason (deferred waiting).
					waiting := strings.Contains(strings.ReplaceAll(q, "vllm:num_requests_waiting_by_reason", ""), "vllm:num_requests_waiting")
					if strings.Contains(q, "timestamp(") || !waiting && !strings.Contains(q, "vllm:time_to_first_token_seconds_bucket") {
						return false
					}
					w.Header().Set("Content-Type", c.ctype)
					w.WriteHeader(c.code)
					_, err := w.Write([]byte(c.body))
					if err != nil {
						panic(err)
					}
					return true
				}
			})
			s, rec := newTestSource(t, testConfig(f.URL()))
			err := s.RefreshOnce(context.Background())
			if err == nil {
				t.Fatal("RefreshOnce succeeded, want an error")
			}
			for _, sig := range []telemetry.Signal{telemetry.Waiting, telemetry.TTFT} {
				fl := rec.find(telemetry.KindFailure, "llama", sig)
				if len(fl) != 1 {
					t.Fatalf("%s: got %d failures, want 1", sig, len(fl))
				}
				checkText(t, fl[0].Err, c.want, c.wantNot, c.maxBytes)
			}
			if got := rec.find(telemetry.KindSample, "llama", telemetry.Waiting); len(got) != 0 {
				t.Errorf("failed query produced values: %+v", got)
			}
			// Other signals still work.
			if got := rec.find(telemetry.KindSample, "llama", telemetry.Running); len(got) != 1 {
				t.Errorf("running: got %+v, want one value", got)
			}
			st := rec.status(t)
			if st.State != telemetry.Error || st.Failures != 1 || !strings.Contains(st.Err, "2 of ") {
				t.Errorf("status %+v, want error state, 1 failure, '2 of N queries failed'", st)
			}
			checkText(t, err.Error(), c.want, c.wantNot, 0)
		})
	}
}

func checkText(t *testing.T, s string, want, wantNot []string, maxBytes int) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%q lacks %q", s, w)
		}
	}
	for _, w := range wantNot {
		if strings.Contains(s, w) {
			t.Errorf("%q contains %q", s, w)
		}
	}
	if maxBytes > 0 && len(s) > maxBytes {
		t.Errorf("message is %d bytes, want at most %d", len(s), maxBytes)
	}
}

func TestAllQueriesFailedMarksEndpoints(t *testing.T) {
	f := newFakeProm(t, "llama")
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.srv.Close()
	rec.Reset()
	if err := s.RefreshOnce(context.Background()); err == nil {
		t.Fatal("want an error with the server gone")
	}
	fl := rec.find(telemetry.KindFailure, "llama", "")
	if len(fl) != 1 || fl[0].Signal != "" || fl[0].Err == "" {
		t.Errorf("got %+v, want one endpoint-wide failure", fl)
	}
	if st := rec.status(t); st.State != telemetry.Error || st.LastOK.IsZero() {
		t.Errorf("status %+v: want error with the last good refresh kept", st)
	}
}

func TestWarningsAndInfosSurface(t *testing.T) {
	f := newFakeProm(t, "llama")
	f.set(func(f *fakeProm) {
		f.warnings = []string{"PromQL warning: encountered a mix of histograms and floats\x1b[2J"}
		f.infos = []string{"PromQL info: metric might not be a counter, name does not end in _total"}
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := rec.status(t)
	joined := strings.Join(st.Warnings, "\n")
	// The first signals' warnings: the list is capped (maxWarnings).
	checkText(t, joined, []string{"ttft: PromQL warning: encountered a mix", `\x1b[2J`, "info: PromQL info: metric might not be a counter"}, []string{"\x1b"}, 0)
	if st.State != telemetry.Live {
		t.Errorf("warnings are not errors: %+v", st)
	}
	if len(st.Warnings) > maxWarnings {
		t.Errorf("%d warnings, want at most %d", len(st.Warnings), maxWarnings)
	}
}

func TestQueryCountIndependentOfEndpoints(t *testing.T) {
	count := func(models int) (first, second, planned int) {
		var names []string
		for i := range models {
			names = append(names, fmt.Sprintf("model-%02d", i))
		}
		f := newFakeProm(t, names...)
		s, rec, clk := clockedSource(t, f, time.Unix(1_000_000, 0))
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		first = f.count()
		clk.Add(10 * time.Second)
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := len(rec.find(telemetry.KindEndpoint, "", "")); got != models {
			t.Fatalf("%d endpoints discovered, want %d", got, models)
		}
		qs := s.state.queries
		planned = len(qs.fresh) + 1 + len(qs.lora) // and the up query (target health), the LoRA info
		for _, q := range qs.value {
			planned += len(q)
		}
		for _, q := range qs.hist {
			planned += len(q)
		}
		return first, f.count() - first, planned
	}
	a1, a2, plan := count(1)
	b1, b2, _ := count(50)
	if a1 != b1 || a2 != b2 {
		t.Errorf("requests per refresh: 1 model %d then %d, 50 models %d then %d; want equal", a1, a2, b1, b2)
	}
	// First: the metric-name listing, then the queries of vLLM only, the
	// one engine it found, and no GPU query without DCGM series: the
	// freshness query and one query per vLLM signal of the table (as of
	// writing 6 instant: tok/s, running, waiting, KV, errors, derived TPOT;
	// 5 histograms: TTFT, TPOT, ITL, E2E, queue), and its LoRA info
	// query. Second: the same without the listing.
	if a1 != plan+1 || a2 != plan || plan < 12 {
		t.Errorf("refreshes made %d and %d requests, want %d and %d (and at least 12 queries)", a1, a2, plan+1, plan)
	}
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	if want := len(spec.Signals) + 5; plan != want {
		t.Errorf("%d queries planned, want %d: one per vLLM signal, the derived TPOT, errors, freshness, up and LoRA", plan, want)
	}
}

func TestHistogramWindowsTileAcrossRefreshes(t *testing.T) {
	f := newFakeProm(t, "llama")
	clk := &fakeClock{t: time.Unix(1_000_005, 0)}
	var failTTFT atomic.Bool
	f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			path := r.URL.Path
			if failTTFT.Load() && strings.HasSuffix(path, "query_range") && strings.Contains(q, "time_to_first_token") {
				writeJSON(w, 503, map[string]string{"status": "error", "errorType": "timeout", "error": "timed out"})
				return true
			}
			return false
		}
	})
	cfg := testConfig(f.URL())
	s, rec := newTestSource(t, cfg)
	s.now = clk.Now
	ttftRanges := func() []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []string
		for _, fm := range f.forms {
			if q := fm["query"]; len(q) == 1 && strings.Contains(q[0], "time_to_first_token") && len(fm["start"]) == 1 {
				out = append(out, fm["start"][0]+"-"+fm["end"][0])
			}
		}
		return out
	}
	refresh := func(advance time.Duration) {
		t.Helper()
		clk.Add(advance)
		// Errors are expected while TTFT fails.
		if err := s.RefreshOnce(context.Background()); err != nil && !failTTFT.Load() {
			t.Fatal(err)
		}
	}
	refresh(0)               // t=1000005: windows ending 999980, 999990, 1000000
	refresh(4 * time.Second) // t=1000009: no new window
	refresh(6 * time.Second) // t=1000015: window ending 1000010
	failTTFT.Store(true)
	refresh(10 * time.Second) // t=1000025: 1000020 fails
	failTTFT.Store(false)
	refresh(10 * time.Second) // t=1000035: catch up 1000020 and 1000030
	want := []string{"999970-1000000", "1000010-1000010", "1000020-1000020", "1000020-1000030"}
	if got := ttftRanges(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("TTFT ranges %v, want %v", got, want)
	}
	var ends []int64
	for _, h := range rec.find(telemetry.KindHistogram, "llama", telemetry.TTFT) {
		ends = append(ends, h.At.Unix())
	}
	if fmt.Sprint(ends) != "[999980 999990 1000000 1000010 1000020 1000030]" {
		t.Errorf("TTFT windows end at %v; want each 10s window exactly once", ends)
	}
}

func TestServerClockOffset(t *testing.T) {
	f := newFakeProm(t, "llama")
	local := &fakeClock{t: time.Unix(2_000_000, 0)}
	f.set(func(f *fakeProm) { f.clock = func() time.Time { return local.Now().Add(time.Hour) } })
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.now = local.Now
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	var end string
	for _, fm := range f.forms {
		if len(fm["end"]) == 1 && len(fm["step"]) == 1 {
			end = fm["end"][0]
		}
	}
	f.mu.Unlock()
	// The last window that ended before server time 2003600 (delay 1ns).
	if end != "2003590" {
		t.Errorf("range end %s, want 2003590 on the server's clock", end)
	}
	hs := rec.find(telemetry.KindHistogram, "llama", telemetry.TTFT)
	if len(hs) == 0 || !hs[len(hs)-1].At.Equal(time.Unix(1_999_990, 0)) {
		t.Errorf("histogram dated %v, want local time 1999990", hs)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	f := newFakeProm(t, "llama")
	cfg := testConfig(f.URL())
	cfg.Refresh = 20 * time.Millisecond
	s, rec := newTestSource(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.find(telemetry.KindSource, "", "")) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	if n := len(rec.find(telemetry.KindSource, "", "")); n < 2 {
		t.Errorf("%d refreshes, want at least 2", n)
	}
}

func TestCustomQuantileQuery(t *testing.T) {
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			path := r.URL.Path
			if strings.HasSuffix(path, "query_range") && strings.HasPrefix(q, "histogram_quantile(0.9,") {
				start, end, step := parseRange(r)
				writeMatrix(w, []fakeSeries{{labels: map[string]string{"model_name": "tgi"}, value: 0.42}}, start, end, step, nil, nil)
				return true
			}
			return false
		}
	})
	cfg := testConfig(f.URL())
	cfg.Quantile = 0.9
	cfg.Queries = map[telemetry.Signal]string{telemetry.TPOT: `histogram_quantile($Q, sum by (le, model_name$_GROUP) (rate(tgi_request_mean_time_per_token_duration_bucket[W])))`}
	s, rec := newTestSource(t, cfg)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.find(telemetry.KindSample, "tgi", telemetry.TPOT)
	if len(got) == 0 || got[0].Value != 0.42 {
		t.Errorf("custom quantile query: got %+v, want samples of 0.42", got)
	}
	if e := rec.find(telemetry.KindEndpoint, "tgi", ""); len(e) != 1 || e[0].Info.Engine != telemetry.EngineUnknown {
		t.Errorf("endpoint %+v, want engine unknown (untagged query)", e)
	}
}

func TestResetsAndSeriesChangesSkipOneWindow(t *testing.T) {
	cases := []struct {
		name   string
		inf    []float64 // cumulative +Inf bucket at the 4 points
		series []float64 // series summed
		why    string
	}{
		{"counter reset", []float64{100, 140, 5, 25}, []float64{1, 1, 1, 1}, "counter reset"},
		{"pod added", []float64{100, 140, 300, 320}, []float64{1, 1, 2, 2}, "set of series changed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProm(t)
			f.set(func(f *fakeProm) {
				f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
					if !strings.HasSuffix(r.URL.Path, "query_range") || !strings.Contains(q, "time_to_first_token") {
						return false
					}
					lbl := func(kv ...string) map[string]string {
						m := map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}
						for i := 0; i < len(kv); i += 2 {
							m[kv[i]] = kv[i+1]
						}
						return m
					}
					half := make([]float64, len(c.inf))
					for i, v := range c.inf {
						half[i] = v / 2
					}
					start, end, step := parseRange(r)
					writeMatrix(w, []fakeSeries{
						{labels: lbl("le", "0.5"), seq: half},
						{labels: lbl("le", "+Inf"), seq: c.inf},
						{labels: lbl("ttftop_part", "series"), seq: c.series},
					}, start, end, step, nil, nil)
					return true
				}
			})
			s, rec := newTestSource(t, testConfig(f.URL()))
			if err := s.RefreshOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			hs := rec.find(telemetry.KindHistogram, "llama", telemetry.TTFT)
			var counts []float64
			for _, h := range hs {
				counts = append(counts, h.Buckets[len(h.Buckets)-1].Count)
			}
			if fmt.Sprint(counts) != "[40 20]" {
				t.Errorf("window counts %v, want [40 20]: the window across the change skipped", counts)
			}
			if w := strings.Join(rec.status(t).Warnings, "\n"); !strings.Contains(w, c.why) {
				t.Errorf("warnings %q lack %q", w, c.why)
			}
		})
	}
}

func TestFamiliesNameAndEngine(t *testing.T) {
	f := newFakeProm(t)
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.Contains(q, "timestamp(") {
				return false
			}
			ts := float64(time.Now().UnixMilli()) / 1000
			writeVector(w, time.Now(), []fakeSeries{
				{labels: map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}, value: ts},
				{labels: map[string]string{"model_name": "llama", "ttftop_engine": "sglang"}, value: ts},
				{labels: map[string]string{"endpoint": "edge-probe", "model": "gpt-x", "ttftop_engine": "ttftop"}, value: ts},
				{labels: map[string]string{"model_name": "evil\x1b]0;pwned\x07\u202e", "ttftop_engine": "vllm"}, value: ts},
			}, nil, nil)
			return true
		}
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]telemetry.Endpoint{}
	for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
		got[o.Endpoint] = *o.Info
	}
	want := map[string]telemetry.Endpoint{
		"llama":                      {Name: "llama", Model: "llama", Engine: telemetry.EngineVLLM},
		"llama@sglang":               {Name: "llama@sglang", Model: "llama", Engine: telemetry.EngineSGLang},
		"edge-probe":                 {Name: "edge-probe", Model: "gpt-x", Engine: telemetry.EngineUnknown},
		`evil\x1b]0;pwned\x07\u202e`: {Name: `evil\x1b]0;pwned\x07\u202e`, Model: `evil\x1b]0;pwned\x07\u202e`, Engine: telemetry.EngineVLLM},
	}
	if len(got) != len(want) {
		t.Fatalf("endpoints %v, want %v", got, want)
	}
	for name, w := range want {
		g := got[name]
		if g.Name != w.Name || g.Model != w.Model || g.Engine != w.Engine {
			t.Errorf("%q: got %+v, want %+v", name, g, w)
		}
	}
}

// A store that answers, but so slowly that a refresh takes several
// refresh intervals, is "ok" only with a warning saying how slow; one that
// keeps up has none.
func TestSlowStoreWarned(t *testing.T) {
	slowWarned := func(slow bool) []string {
		f := newFakeProm(t, "m")
		s, rec := newTestSource(t, testConfig(f.URL()))
		if slow {
			// Each look at the clock is 2 s later: as if every query took seconds.
			base := time.Now()
			var calls atomic.Int64
			s.now = func() time.Time { return base.Add(time.Duration(calls.Add(1)) * 2 * time.Second) }
		}
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range rec.status(t).Warnings {
			if strings.Contains(w, "slow store") {
				out = append(out, w)
			}
		}
		return out
	}
	if w := slowWarned(false); len(w) != 0 {
		t.Errorf("a store that keeps up: %q", w)
	}
	w := slowWarned(true)
	if len(w) != 1 || !strings.Contains(w[0], "this refresh took") || !strings.Contains(w[0], "against a refresh every 5s") {
		t.Errorf("a slow store: warnings %q, want one saying how long the refresh took", w)
	}
}

// A refresh cut short by shutdown (a snapshot's --duration ending while
// its queries are in flight) is no failure of the store: no failure or
// error status reaches the sink.
func TestRefreshCutByShutdownIsNoFailure(t *testing.T) {
	f := newFakeProm(t, "m")
	s, rec := newTestSource(t, testConfig(f.URL()))
	// A first refresh answered; the next, with no histogram step due,
	// runs only the instant queries, which the store then never answers.
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	arrived := make(chan struct{}, 64)
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			arrived <- struct{}{}
			<-r.Context().Done() // never answers: the client gives up
			return true
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.RefreshOnce(ctx) }()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RefreshOnce after cancel: %v, want context.Canceled", err)
	}
	for _, o := range rec.All() {
		if o.Kind == telemetry.KindFailure || o.Kind == telemetry.KindSource {
			t.Errorf("reported after shutdown: %+v", o)
		}
	}
}
