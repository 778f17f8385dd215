package scrape

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/telemetry"
)

// freshPage is raw as a just-started server would expose it: every sample
// 0 except the _created gauges (same process), so scraping freshPage and
// then raw yields the capture's own totals as one interval's increments.
func freshPage(raw string) string {
	lines := strings.Split(raw, "\n")
	for i, l := range lines {
		if l == "" || l[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(l, ' ')
		name := l
		if j := strings.IndexAny(l, "{ "); j >= 0 {
			name = l[:j]
		}
		if sp > 0 && !strings.HasSuffix(name, "_created") {
			lines[i] = l[:sp+1] + "0.0"
		}
	}
	return strings.Join(lines, "\n")
}

// pageSum adds the values of every sample of family name on a page, read
// line by line (independently of the parser under test).
func pageSum(t *testing.T, raw, name string) float64 {
	t.Helper()
	var sum float64
	n := 0
	for _, l := range strings.Split(raw, "\n") {
		if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		sum += v
		n++
	}
	if n == 0 {
		t.Fatalf("no %s on the page", name)
	}
	return sum
}

// scrapePages scrapes each body in turn, one second apart, and returns the
// observations of the last scrape.
func scrapePages(t *testing.T, cfg Config, bodies ...string) []telemetry.Observation {
	t.Helper()
	_, obs := scrapeTarget(t, cfg, nil, bodies...)
	return obs
}

// onlyEndpoint returns the one endpoint that observations name.
func onlyEndpoint(t *testing.T, obs []telemetry.Observation) string {
	t.Helper()
	seen := map[string]bool{}
	var ep string
	for _, o := range obs {
		if o.Endpoint != "" && !seen[o.Endpoint] {
			seen[o.Endpoint], ep = true, o.Endpoint
		}
	}
	if len(seen) != 1 {
		t.Fatalf("endpoints %v", seen)
	}
	return ep
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

func checkSample(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal, want float64) telemetry.Observation {
	t.Helper()
	o := one(t, obs, telemetry.KindSample, ep, sig)
	if !near(o.Value, want) {
		t.Errorf("%s = %v, want %v", sig, o.Value, want)
	}
	return o
}

// checkPhase checks a request-phase histogram increment: count and sum
// (seconds) as the page's _count and _sum say.
func checkPhase(t *testing.T, obs []telemetry.Observation, raw, ep string, sig telemetry.Signal, family string) {
	t.Helper()
	o := one(t, obs, telemetry.KindHistogram, ep, sig)
	count := o.Buckets[len(o.Buckets)-1].Count
	if want := pageSum(t, raw, family+"_count"); count != want || count == 0 {
		t.Errorf("%s: %v observations, want %v", sig, count, want)
	}
	if want := pageSum(t, raw, family+"_sum"); !near(o.Value, want) {
		t.Errorf("%s: sum %v s, want %v", sig, o.Value, want)
	}
}

// vLLM 0.27 with MTP speculative decoding: every diagnosis family, the
// MFU counters present but 0 (disabled).
func TestDiagnosisVLLMv027Capture(t *testing.T) {
	raw := readFixture(t, "vllm-v0.27-xpu-specdecode-mfu-metrics.txt")
	peak := 608e9 // the B70's bandwidth is not in the table: configured
	cfg := Config{MBU: map[string]bandwidth.Model{"*": {Parameters: 27e9, BytesPerParameter: 1, PeakBandwidth: peak}}}
	obs := scrapePages(t, cfg, freshPage(raw), raw)
	ep := onlyEndpoint(t, obs)
	if !strings.HasSuffix(ep, "/qwen38-fp8") {
		t.Fatalf("endpoint %q", ep)
	}
	checkPhase(t, obs, raw, ep, telemetry.QueueTime, "vllm:request_queue_time_seconds")
	checkPhase(t, obs, raw, ep, telemetry.PrefillTime, "vllm:request_prefill_time_seconds")
	checkPhase(t, obs, raw, ep, telemetry.DecodeTime, "vllm:request_decode_time_seconds")
	if o := checkSample(t, obs, ep, telemetry.RequestRate, pageSum(t, raw, "vllm:request_success_total")); o.RateWindow != time.Second { // 6 in 1 s
		t.Errorf("request rate's window %s, want the 1s scrape interval", o.RateWindow)
	}
	if o := one(t, obs, telemetry.KindSample, ep, telemetry.Running); o.RateWindow != 0 {
		t.Errorf("a gauge carries a rate window %s", o.RateWindow)
	}
	checkSample(t, obs, ep, telemetry.PromptTPS, pageSum(t, raw, "vllm:prompt_tokens_total"))
	checkSample(t, obs, ep, telemetry.Preemptions, pageSum(t, raw, "vllm:num_preemptions_total"))
	accepted := pageSum(t, raw, "vllm:spec_decode_num_accepted_tokens_total")
	if o := checkSample(t, obs, ep, telemetry.SpecAccept, accepted/pageSum(t, raw, "vllm:spec_decode_num_draft_tokens_total")); o.Approx || o.RateWindow != time.Second {
		t.Errorf("acceptance rate from exact counts: approx %v, rate window %s (want exact, 1s)", o.Approx, o.RateWindow)
	}
	checkSample(t, obs, ep, telemetry.SpecAcceptLen, 1+accepted/pageSum(t, raw, "vllm:spec_decode_num_drafts_total"))
	// Prefix caching off: 0 hits of 0 queries is no data, not 0 %.
	one(t, obs, telemetry.KindNoData, ep, telemetry.PrefixCacheHit)
	// MFU metrics off: the bytes counter stays 0, so MBU is the estimate.
	checkSample(t, obs, ep, telemetry.EngineReadBytes, 0)
	if o := one(t, obs, telemetry.KindSample, ep, telemetry.MBU); !o.Approx {
		t.Errorf("MBU %+v from a disabled bytes counter is not marked estimated", o)
	}

	// With the counter moving (1 TB in the last second), MBU is measured:
	// the rate is over the window of all three scrapes (2 s).
	const readBytes = 1e12 / 2
	more := strings.Replace(raw, `vllm:estimated_read_bytes_per_gpu_total{engine="0",model_name="qwen38-fp8"} 0.0`,
		`vllm:estimated_read_bytes_per_gpu_total{engine="0",model_name="qwen38-fp8"} 1e12`, 1)
	obs = scrapePages(t, cfg, freshPage(raw), raw, more)
	ep = onlyEndpoint(t, obs)
	checkSample(t, obs, ep, telemetry.EngineReadBytes, readBytes)
	if o := checkSample(t, obs, ep, telemetry.MBU, readBytes/peak); o.Approx {
		t.Error("MBU from the engine's bytes counter marked estimated")
	}

	// Two data-parallel ranks, each counting its own GPU's bytes: the
	// model's figure is per GPU, their mean (1 and 3 TB over the 2 s
	// window), not their sum; each rank's row has its own.
	rank0 := `vllm:estimated_read_bytes_per_gpu_total{engine="0",model_name="qwen38-fp8"} `
	rank1 := `vllm:estimated_read_bytes_per_gpu_total{engine="1",model_name="qwen38-fp8"} `
	twoRanks := func(page, v0, v1 string) string {
		return strings.Replace(page, rank0+"0.0", rank0+v0+"\n"+rank1+v1, 1)
	}
	obs = scrapePages(t, cfg, freshPage(twoRanks(raw, "0.0", "0.0")), twoRanks(raw, "0.0", "0.0"), twoRanks(raw, "1e12", "3e12"))
	eps := endpoints(obs)
	ep = eps[0] // the model's, before its ranks'
	if len(eps) != 3 || eps[1] != ep+" [dp 0]" || eps[2] != ep+" [dp 1]" {
		t.Fatalf("endpoints %v, want the model's and its two ranks'", eps)
	}
	checkSample(t, obs, ep, telemetry.EngineReadBytes, 1e12)
	checkSample(t, obs, ep+" [dp 0]", telemetry.EngineReadBytes, 0.5e12)
	checkSample(t, obs, ep+" [dp 1]", telemetry.EngineReadBytes, 1.5e12)
	checkSample(t, obs, ep, telemetry.MBU, 1e12/peak)
}

// vLLM 0.10: the prefix cache (both the new and the deprecated gpu_ names).
func TestDiagnosisVLLMv010Capture(t *testing.T) {
	raw := readFixture(t, "vllm-v0.10-metrics.txt") + "\n"
	obs := scrapePages(t, Config{}, freshPage(raw), raw)
	ep := find(obs, telemetry.KindSample, "*", telemetry.PrefixCacheHit)
	if len(ep) != 1 {
		t.Fatalf("prefix hit: %s", dump(obs))
	}
	want := pageSum(t, raw, "vllm:gpu_prefix_cache_hits_total") / pageSum(t, raw, "vllm:gpu_prefix_cache_queries_total")
	if !near(ep[0].Value, want) {
		t.Errorf("prefix hit %v, want %v (80/246)", ep[0].Value, want)
	}
	if len(find(obs, telemetry.KindSample, "*", telemetry.SpecAccept)) != 0 {
		t.Error("spec-decode acceptance without spec-decode counters")
	}
}

// SGLang's gauges: read as they are on the first scrape.
func TestDiagnosisSGLangCapture(t *testing.T) {
	raw := readFixture(t, "sglang-metrics.txt")
	obs := scrapePages(t, Config{}, raw)
	ep := find(obs, telemetry.KindSample, "*", telemetry.PrefixCacheHit)
	if len(ep) != 1 || !near(ep[0].Value, pageSum(t, raw, "sglang:cache_hit_rate")) {
		t.Fatalf("prefix hit %v, want sglang:cache_hit_rate %v", ep, pageSum(t, raw, "sglang:cache_hit_rate"))
	}
	obs = scrapePages(t, Config{}, freshPage(raw), raw)
	checkSample(t, obs, onlyEndpoint(t, obs), telemetry.PromptTPS, pageSum(t, raw, "sglang:prompt_tokens_total"))
}

// TGI counts requests without _total.
func TestDiagnosisTGICapture(t *testing.T) {
	raw := readFixture(t, "tgi-metrics-excerpt.txt")
	tg := newTarget(t, freshPage(raw))
	tg.extra["/info"] = `{"model_id":"bigscience/bloom-560m"}`
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	tg.set(raw)
	c.Take()
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	checkSample(t, obs, tg.host()+"/bigscience/bloom-560m", telemetry.RequestRate, pageSum(t, raw, "tgi_request_count")/2)
	checkPhase(t, obs, raw, tg.host()+"/bigscience/bloom-560m", telemetry.QueueTime, "tgi_request_queue_duration")
}

// Each model's MBU estimate uses its own KV pool from cache_config_info,
// never the mean over the models sharing the page.
func TestMBUEstimateUsesEachModelsKVPool(t *testing.T) {
	page := func(count, sum float64) string {
		var b strings.Builder
		b.WriteString("# TYPE vllm:kv_cache_usage_perc gauge\n")
		for _, m := range []string{"a", "b"} {
			b.WriteString(`vllm:kv_cache_usage_perc{engine="0",model_name="` + m + `"} 0.5` + "\n")
		}
		b.WriteString("# TYPE vllm:cache_config_info gauge\n")
		b.WriteString(`vllm:cache_config_info{block_size="16",engine="0",model_name="a",num_gpu_blocks="100"} 1.0` + "\n")
		b.WriteString(`vllm:cache_config_info{block_size="16",engine="0",model_name="b",num_gpu_blocks="10000"} 1.0` + "\n")
		b.WriteString("# TYPE vllm:inter_token_latency_seconds histogram\n")
		for _, m := range []string{"a", "b"} {
			l := `engine="0",model_name="` + m + `"`
			c := strconv.FormatFloat(count, 'g', -1, 64)
			b.WriteString(`vllm:inter_token_latency_seconds_bucket{engine="0",le="+Inf",model_name="` + m + `"} ` + c + "\n")
			b.WriteString(`vllm:inter_token_latency_seconds_count{` + l + `} ` + c + "\n")
			b.WriteString(`vllm:inter_token_latency_seconds_sum{` + l + `} ` + strconv.FormatFloat(sum, 'g', -1, 64) + "\n")
		}
		return b.String()
	}
	const weights, kvPerToken, peak, step = 2e9, 1e5, 1e12, 0.01
	cfg := Config{MBU: map[string]bandwidth.Model{"*": {Parameters: 1e9, BytesPerParameter: 2, KVBytesPerToken: kvPerToken, PeakBandwidth: peak}}}
	obs := scrapePages(t, cfg, page(0, 0), page(10, 10*step))
	for m, blocks := range map[string]float64{"a": 100, "b": 10000} {
		var got []telemetry.Observation
		for _, o := range find(obs, telemetry.KindSample, "*", telemetry.MBU) {
			if strings.HasSuffix(o.Endpoint, "/"+m) {
				got = append(got, o)
			}
		}
		want := (weights + 0.5*blocks*16*kvPerToken) / step / peak
		if len(got) != 1 || !near(got[0].Value, want) || !got[0].Approx {
			t.Errorf("model %s MBU %+v, want ~%v", m, got, want)
		}
	}
}
