package sim

import "strings"

// writeSGLang renders the families of fixtures/metrics/sglang-metrics.txt
// (SGLang 0.4-era): label model_name only, le first, histograms in
// sum → buckets → count order. time_per_output_token_seconds carries the
// per-step inter-token intervals, as that version did.
func writeSGLang(b *strings.Builder, snaps []snapshot) {
	counter := func(name, help string, v func(snapshot) float64) {
		family(b, name, "counter", help)
		for _, sn := range snaps {
			sample(b, name, sglangLabels(sn), pyFloat(v(sn)))
		}
	}
	gauge := func(name, help string, v func(snapshot) float64) {
		family(b, name, "gauge", help)
		for _, sn := range snaps {
			sample(b, name, sglangLabels(sn), pyFloat(v(sn)))
		}
	}
	hist := func(name, help, key string) {
		family(b, name, "histogram", help)
		for _, sn := range snaps {
			writeHistogram(b, name, sn.h[key], "", ","+sglangLabels(sn), true)
		}
	}
	counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", func(sn snapshot) float64 { return sn.promptTokens })
	counter("sglang:generation_tokens_total", "Number of generation tokens processed.", func(sn snapshot) float64 { return sn.genTokens })
	gauge("sglang:token_usage", "The token usage", func(sn snapshot) float64 { return sn.kvUsage })
	// Newer SGLang's counters beside the 0.4-era families: the radix
	// cache's hit tokens (prefix caching) and requests finished.
	counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", func(sn snapshot) float64 { return sn.ec.prefixHits })
	counter("sglang:num_requests_total", "Number of requests processed.", func(sn snapshot) float64 {
		var n float64
		for _, v := range sn.success {
			n += v
		}
		return n
	})
	// The hit rate gauge, since start (SGLang's own is recent batches').
	gauge("sglang:cache_hit_rate", "The cache hit rate", func(sn snapshot) float64 {
		if sn.ec.prefixQueries == 0 {
			return 0
		}
		return sn.ec.prefixHits / sn.ec.prefixQueries
	})
	hist("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", "time_to_first_token_seconds")
	hist("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", "e2e_request_latency_seconds")
	hist("sglang:time_per_output_token_seconds", "Histogram of time per output token in seconds.", "inter_token_latency_seconds")
	gauge("sglang:num_running_reqs", "The number of running requests", func(sn snapshot) float64 { return float64(sn.running) })
	gauge("sglang:num_used_tokens", "The number of used tokens", func(sn snapshot) float64 {
		return float64(sn.e.usedBlocks.Load() * blockSize)
	})
	gauge("sglang:gen_throughput", "The generate throughput (token/s)", func(sn snapshot) float64 {
		return sn.e.win.read(sn.e.windowAt(sn.e.srv.now())).tokensPerS
	})
	gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue", func(sn snapshot) float64 { return float64(sn.waiting) })
	var spec []snapshot
	for _, sn := range snaps {
		if specOn(sn) && sn.ec.specDrafts > 0 {
			spec = append(spec, sn)
		}
	}
	if len(spec) > 0 {
		snaps = spec
		gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding", func(sn snapshot) float64 {
			return 1 + sn.ec.specAccepted/sn.ec.specDrafts
		})
		gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding", func(sn snapshot) float64 {
			return sn.ec.specAccepted / sn.ec.specDraftTokens
		})
	}
}

// sglangLabels are a series' labels: model_name, and dp_rank for a model
// served by data-parallel ranks (as SGLang's scheduler labels them).
func sglangLabels(sn snapshot) string {
	if sn.e.spec.DPRanks > 1 {
		return `dp_rank="` + sn.rank + `",model_name="` + sn.name + `"`
	}
	return `model_name="` + sn.name + `"`
}
