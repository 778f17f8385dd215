package scrape

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// scrapeSeq scrapes each body in turn, one second apart, from a target
// with the extra JSON paths given, and returns the last scrape's
// observations.
func scrapeSeq(t *testing.T, extra map[string]string, bodies ...string) (*target, []telemetry.Observation) {
	t.Helper()
	return scrapeTarget(t, Config{}, extra, bodies...)
}

// scrapeTarget is scrapeSeq with a configuration (URL and clock set here).
func scrapeTarget(t *testing.T, cfg Config, extra map[string]string, bodies ...string) (*target, []telemetry.Observation) {
	t.Helper()
	tg := newTarget(t, bodies[0])
	for path, body := range extra {
		tg.extra[path] = body
	}
	c := &collector{}
	clk := newClock()
	cfg.URL, cfg.Now = tg.URL, clk.Now
	s := New(cfg, c)
	for i, b := range bodies {
		if i > 0 {
			clk.Advance(time.Second)
		}
		tg.set(b)
		c.Take()
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatalf("scrape %d: %v", i+1, err)
		}
	}
	return tg, c.Take()
}

// withLlamaCached is the llama.cpp capture with the counters current
// mainline writes next to prompt_tokens_total (HELP text of its
// server-task.cpp to_metrics), which the capture predates: prompt tokens
// evaluated set to evaluated, reused from the cache to cached.
func withLlamaCached(t *testing.T, raw, evaluated, cached string) string {
	t.Helper()
	const line = "llamacpp:prompt_tokens_total 6886"
	if !strings.Contains(raw, line+"\n") {
		t.Fatalf("capture lacks %q", line)
	}
	return strings.Replace(raw, line+"\n", "llamacpp:prompt_tokens_total "+evaluated+"\n"+
		"# HELP llamacpp:prompt_tokens_cached_total Number of prompt tokens reused from the cache\n"+
		"# TYPE llamacpp:prompt_tokens_cached_total counter\n"+
		"llamacpp:prompt_tokens_cached_total "+cached+"\n", 1)
}

// llama.cpp's prefix-cache hit rate is cached / (cached + evaluated)
// prompt tokens: its prompt_tokens_total excludes the cached ones, so
// cached / prompt would read above 100 % on a warm cache.
func TestPrefixHitLlamaCppShare(t *testing.T) {
	raw := readFixture(t, "ik-llamacpp-server-metrics.txt")
	models := map[string]string{"/v1/models": `{"object":"list","data":[{"id":"smollm2-Q4_K_M","object":"model"}]}`}

	// The capture as it is: no cached counter, no hit rate at all.
	tg, obs := scrapeSeq(t, models, freshPage(raw), raw)
	ep := tg.host() + "/smollm2-Q4_K_M"
	if n := len(find(obs, telemetry.KindSample, ep, telemetry.PrefixCacheHit)) + len(find(obs, telemetry.KindNoData, ep, telemetry.PrefixCacheHit)); n != 0 {
		t.Errorf("prefix hit from a page without prompt_tokens_cached_total: %s", dump(obs))
	}

	// Fresh page → the page with the counter: the page's own totals are
	// the increments (expected value from the page text).
	page := withLlamaCached(t, raw, "6886", "2951")
	tg, obs = scrapeSeq(t, models, freshPage(page), page)
	ep = tg.host() + "/smollm2-Q4_K_M"
	cached := pageSum(t, page, "llamacpp:prompt_tokens_cached_total")
	evaluated := pageSum(t, page, "llamacpp:prompt_tokens_total")
	if o := checkSample(t, obs, ep, telemetry.PrefixCacheHit, cached/(cached+evaluated)); o.Approx { // 2951 / 9837
		t.Error("hit rate from exact counts marked approximate")
	}
	checkSample(t, obs, ep, telemetry.PromptTPS, evaluated)

	// Counters grown between two pages: +1500 cached, +500 evaluated is a
	// 75 % hit rate over the interval (1500/500 = 3 would be the plain ratio).
	grown := withLlamaCached(t, raw, "7386", "4451")
	tg, obs = scrapeSeq(t, models, page, grown)
	checkSample(t, obs, tg.host()+"/smollm2-Q4_K_M", telemetry.PrefixCacheHit, 0.75)

	// No prompt tokens in the interval: 0 / 0 is no data, never 0 %.
	tg, obs = scrapeSeq(t, models, page, page)
	ep = tg.host() + "/smollm2-Q4_K_M"
	one(t, obs, telemetry.KindNoData, ep, telemetry.PrefixCacheHit)
	if n := len(find(obs, telemetry.KindSample, ep, telemetry.PrefixCacheHit)); n != 0 {
		t.Errorf("a hit rate from 0 / 0: %s", dump(obs))
	}
}

// trtllmBlocksPage is a TensorRT-LLM trtllm-serve page in the shape of its
// collector.py (prometheus_client Counters kv_cache_reused_blocks and
// kv_cache_missed_blocks, the kv_cache_hit_rate gauge; labels model_name
// and engine_type), generated: no capture of TensorRT-LLM exists.
func trtllmBlocksPage(reusedA, missedA, reusedB, missedB string) string {
	a, b := `{engine_type="trtllm",model_name="a"}`, `{engine_type="trtllm",model_name="b"}`
	return "# HELP trtllm_kv_cache_reused_blocks_total Cumulative number of KV cache blocks reused (cache hits)\n" +
		"# TYPE trtllm_kv_cache_reused_blocks_total counter\n" +
		"trtllm_kv_cache_reused_blocks_total" + a + " " + reusedA + "\n" +
		"trtllm_kv_cache_reused_blocks_total" + b + " " + reusedB + "\n" +
		"# HELP trtllm_kv_cache_missed_blocks_total Cumulative number of KV cache blocks missed (cache misses)\n" +
		"# TYPE trtllm_kv_cache_missed_blocks_total counter\n" +
		"trtllm_kv_cache_missed_blocks_total" + a + " " + missedA + "\n" +
		"trtllm_kv_cache_missed_blocks_total" + b + " " + missedB + "\n" +
		"# HELP trtllm_kv_cache_hit_rate KV cache hit rate\n# TYPE trtllm_kv_cache_hit_rate gauge\n" +
		"trtllm_kv_cache_hit_rate" + a + " 0.1\ntrtllm_kv_cache_hit_rate" + b + " 0.1\n" +
		"# TYPE trtllm_num_requests_running gauge\n" +
		"trtllm_num_requests_running" + a + " 1\ntrtllm_num_requests_running" + b + " 1\n"
}

// TensorRT-LLM without the cached-prompt token counter: the hit rate is
// reused / (reused + missed) blocks per model, preferred to the
// engine's hit-rate gauge.
func TestPrefixHitTRTLLMBlocksShare(t *testing.T) {
	// a: +60 reused, +20 missed; b: +0 reused, +20 missed.
	tg, obs := scrapeSeq(t, nil, trtllmBlocksPage("100", "50", "7", "10"), trtllmBlocksPage("160", "70", "7", "30"))
	checkSample(t, obs, tg.host()+"/a", telemetry.PrefixCacheHit, 0.75)
	checkSample(t, obs, tg.host()+"/b", telemetry.PrefixCacheHit, 0)
	// No lookups at all in the interval: no data.
	_, obs = scrapeSeq(t, nil, trtllmBlocksPage("1", "1", "1", "1"), trtllmBlocksPage("1", "1", "1", "1"))
	if n := len(find(obs, telemetry.KindSample, "*", telemetry.PrefixCacheHit)); n != 0 {
		t.Errorf("a hit rate from 0 / 0: %s", dump(obs))
	}
}

// A counter ratio that stands in for a distribution is marked
// approximate (Triton's mean queue time, a diagnosis signal too); the hit
// rates and shares, exact counts, are not (checked above).
func TestMeanQueueTimeApproximate(t *testing.T) {
	raw := readFixture(t, "triton-metrics-excerpt.txt")
	obs := scrapePages(t, Config{}, freshPage(raw), raw)
	qs := find(obs, telemetry.KindSample, "*", telemetry.QueueTime)
	if len(qs) == 0 {
		t.Fatalf("no mean queue time: %s", dump(obs))
	}
	for _, o := range qs {
		if !o.Approx {
			t.Errorf("%s: mean queue time %v not marked approximate", o.Endpoint, o.Value)
		}
	}
}
