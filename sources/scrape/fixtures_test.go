package scrape

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// scrapeTwice scrapes body twice, one second apart, and returns the
// observations of each scrape.
func scrapeTwice(t *testing.T, tg *target, cfg Config) (first, second []telemetry.Observation) {
	t.Helper()
	c := &collector{}
	clk := newClock()
	cfg.URL, cfg.Now = tg.URL, clk.Now
	s := New(cfg, c)
	ctx := context.Background()
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatalf("scrape 1: %v", err)
	}
	first = c.Take()
	clk.Advance(time.Second)
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatalf("scrape 2: %v", err)
	}
	return first, c.Take()
}

func checkGauge(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal, want float64) {
	t.Helper()
	if o := one(t, obs, telemetry.KindSample, ep, sig); o.Value != want {
		t.Errorf("%s %s = %v, want %v", ep, sig, o.Value, want)
	}
}

// checkErrorCounts checks one error-rate observation of failed of total
// requests since the previous scrape (telemetry.ErrorCounts).
func checkErrorCounts(t *testing.T, obs []telemetry.Observation, ep string, failed, total float64) {
	t.Helper()
	o := one(t, obs, telemetry.KindHistogram, ep, telemetry.ErrorRate)
	wantB, wantSum := telemetry.ErrorCounts(failed, total)
	if o.Value != wantSum || len(o.Buckets) != 2 || o.Buckets[0] != wantB[0] || o.Buckets[1] != wantB[1] {
		t.Errorf("%s error counts %v sum %v, want %d of %d", ep, o.Buckets, o.Value, int(failed), int(total))
	}
}

// zeroHistogram checks an unchanged page gives an all-zero increment.
func zeroHistogram(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal, buckets int) {
	t.Helper()
	o := one(t, obs, telemetry.KindHistogram, ep, sig)
	if len(o.Buckets) != buckets || o.Value != 0 {
		t.Fatalf("%s %s: %d buckets, sum %v", ep, sig, len(o.Buckets), o.Value)
	}
	for _, b := range o.Buckets {
		if b.Count != 0 {
			t.Fatalf("%s %s: non-zero increment %+v", ep, sig, b)
		}
	}
}

func TestFixtureVLLMv010(t *testing.T) {
	raw := readFixture(t, "vllm-v0.10-metrics.txt")
	// The capture lacks its final newline: that is a truncated page.
	tg := newTarget(t, raw)
	c := &collector{}
	if err := New(Config{URL: tg.URL}, c).ScrapeOnce(context.Background()); err == nil ||
		!strings.Contains(err.Error(), "unexpected end of input stream") {
		t.Fatalf("truncated page: %v", err)
	}
	if st := status(t, c.Take()); st.State != telemetry.Error {
		t.Fatalf("state %v", st.State)
	}

	tg.set(raw + "\n")
	first, second := scrapeTwice(t, tg, Config{})
	ep := tg.host() + "/Qwen/Qwen3-4B-Instruct-2507-FP8"
	if got := endpoints(first); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v", got)
	}
	info := one(t, first, telemetry.KindEndpoint, ep, "").Info
	if info.Engine != telemetry.EngineVLLM || info.Model != "Qwen/Qwen3-4B-Instruct-2507-FP8" {
		t.Fatalf("info %+v", info)
	}
	checkGauge(t, first, ep, telemetry.Running, 0)
	checkGauge(t, first, ep, telemetry.Waiting, 0)
	checkGauge(t, first, ep, telemetry.KVCache, 0.0011764705882353343) // kv_cache_usage_perc wins
	if n := len(find(first, telemetry.KindHistogram, "*", telemetry.TTFT)); n != 0 {
		t.Fatal("histogram emitted without a baseline")
	}
	st := status(t, first)
	if st.State != telemetry.Live || !strings.Contains(st.Description, "vLLM") {
		t.Fatalf("status %+v", st)
	}
	for _, name := range []string{"vllm:time_per_output_token_seconds", "vllm:kv_cache_usage_perc", "vllm:cache_config_info", "vllm:request_success_total"} {
		if !contains(st.Recognised, name) {
			t.Errorf("recognised lacks %s: %v", name, st.Recognised)
		}
	}
	// Unchanged page: zero increments; ITL from the old TPOT name (19 bounds + Inf).
	zeroHistogram(t, second, ep, telemetry.ITL, 20)
	zeroHistogram(t, second, ep, telemetry.TTFT, 23)
	zeroHistogram(t, second, ep, telemetry.E2E, 22)
	if n := len(find(second, telemetry.KindHistogram, ep, telemetry.TPOT)); n != 0 {
		t.Fatal("TPOT from a page without request_time_per_output_token_seconds")
	}
	checkGauge(t, second, ep, telemetry.OutputTPS, 0)
	checkErrorCounts(t, second, ep, 0, 0) // no requests between the scrapes
	for _, o := range second {
		if o.Interval != DefaultInterval || o.Source != "scrape:"+tg.URL+"/metrics" {
			t.Fatalf("observation without interval/source: %+v", o)
		}
	}
}

func TestFixtureVLLMv04(t *testing.T) {
	tg := newTarget(t, readFixture(t, "vllm-v0.4-metrics.txt"))
	first, second := scrapeTwice(t, tg, Config{})
	ep := tg.host() + "/facebook/opt-125m"
	checkGauge(t, first, ep, telemetry.KVCache, 0) // V0: gpu_cache_usage_perc
	checkGauge(t, first, ep, telemetry.Running, 0)
	zeroHistogram(t, second, ep, telemetry.ITL, 14) // TPOT name, V0 buckets 0.01…2.5
	zeroHistogram(t, second, ep, telemetry.E2E, 11)
	if len(find(second, telemetry.KindHistogram, ep, telemetry.QueueTime)) != 0 {
		t.Fatal("queue histogram on V0")
	}
}

func TestFixtureSGLang(t *testing.T) {
	tg := newTarget(t, readFixture(t, "sglang-metrics.txt"))
	first, second := scrapeTwice(t, tg, Config{})
	ep := tg.host() + "/meta-llama/Llama-3.1-8B-Instruct"
	if got := endpoints(first); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v (func_latency's name label is not a model)", got)
	}
	checkGauge(t, first, ep, telemetry.Running, 162)
	checkGauge(t, first, ep, telemetry.Waiting, 2826)
	checkGauge(t, first, ep, telemetry.KVCache, 0.28)
	zeroHistogram(t, second, ep, telemetry.ITL, 19)  // old time_per_output_token name, 0.005…2.5
	zeroHistogram(t, second, ep, telemetry.TTFT, 21) // 0.001…30 + Inf
	checkGauge(t, second, ep, telemetry.OutputTPS, 0)
}

func TestFixtureTGI(t *testing.T) {
	tg := newTarget(t, readFixture(t, "tgi-metrics-excerpt.txt"))
	tg.extra["/info"] = `{"model_id":"bigscience/bloom-560m","max_input_tokens":1024}`
	first, second := scrapeTwice(t, tg, Config{})
	ep := tg.host() + "/bigscience/bloom-560m"
	if got := endpoints(first); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v", got)
	}
	checkGauge(t, first, ep, telemetry.Running, 0)
	checkGauge(t, first, ep, telemetry.Waiting, 0)
	zeroHistogram(t, second, ep, telemetry.TPOT, 36) // 35 geometric bounds + Inf
	zeroHistogram(t, second, ep, telemetry.E2E, 36)
	checkErrorCounts(t, second, ep, 0, 0)
	// The announcement says what TGI can never give: TTFT, not TPOT.
	info := one(t, first, telemetry.KindEndpoint, ep, "").Info
	if why := info.Unmeasurable[telemetry.TTFT]; why != "TGI exposes no TTFT histogram" {
		t.Errorf("unmeasurable %v", info.Unmeasurable)
	}
	if why, ok := info.Unmeasurable[telemetry.TPOT]; ok {
		t.Errorf("TPOT claimed unmeasurable: %q", why)
	}
}

func TestFixtureTriton(t *testing.T) {
	tg := newTarget(t, readFixture(t, "triton-metrics-excerpt.txt"))
	first, second := scrapeTwice(t, tg, Config{})
	if got := endpoints(first); len(got) != 8 || !contains(got, tg.host()+"/densenet_onnx") {
		t.Fatalf("endpoints %v", got)
	}
	ep := tg.host() + "/densenet_onnx"
	checkGauge(t, first, ep, telemetry.Waiting, 0)          // nv_inference_pending_request_count
	one(t, second, telemetry.KindNoData, ep, telemetry.E2E) // Δduration/Δsuccess = 0/0
	checkErrorCounts(t, second, ep, 0, 0)
}

func TestFixtureDCGMIsNotAnEngine(t *testing.T) {
	tg := newTarget(t, readFixture(t, "dcgm-exporter-metrics.txt"))
	first, _ := scrapeTwice(t, tg, Config{})
	if got := endpoints(first); len(got) != 0 {
		t.Fatalf("endpoints %v", got)
	}
	st := status(t, first)
	if st.State != telemetry.NoData || !strings.Contains(st.Description, "dcgm-exporter") {
		t.Fatalf("status %+v", st)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
