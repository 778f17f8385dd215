package engines

import "github.com/tokentop/tokentop/telemetry"

// All returns every engine spec in detection order. Each call builds a
// fresh table, so callers may keep and modify their copy.
func All() []Spec {
	return []Spec{vllm(), sglang(), lmdeploy(), llamaCpp(), tgi(), triton(), nim(), trtllm()}
}

// Lookup returns the spec of engine e.
func Lookup(e telemetry.Engine) (Spec, bool) {
	for _, s := range All() {
		if s.Engine == e {
			return s, true
		}
	}
	return Spec{}, false
}

func hist(name string) Alias           { return Alias{Name: name, Type: Histogram} }
func histNote(name, note string) Alias { return Alias{Name: name, Type: Histogram, Note: note} }
func gauge(name string) Alias          { return Alias{Name: name, Type: Gauge} }
func gaugeMax(name string) Alias       { return Alias{Name: name, Type: Gauge, Agg: Max} }
func counter(name string) Alias        { return Alias{Name: name, Type: Counter} }
func counterNote(name, note string) Alias {
	return Alias{Name: name, Type: Counter, Note: note}
}
func gaugeMaxNote(name, note string) Alias {
	return Alias{Name: name, Type: Gauge, Agg: Max, Note: note}
}
func ratio(num, den string, scale float64, note string) Alias {
	return Alias{Name: num, Type: CounterRatio, Per: den, Scale: scale, Note: note}
}

// vLLM V0 (≤0.7) and V1 (0.8+; adds the engine label and *_created gauges).
func vllm() Spec {
	const itlNote = "one observation per engine step per request (step time)"
	return Spec{
		Engine:      telemetry.EngineVLLM,
		Title:       "vLLM",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/metrics"},
		Prefixes:    []string{"vllm:"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {hist("vllm:time_to_first_token_seconds")},
			telemetry.ITL: {
				histNote("vllm:inter_token_latency_seconds", itlNote),
				histNote("vllm:time_per_output_token_seconds", itlNote+"; pre-0.10.2 name of ITL"),
			},
			telemetry.TPOT:      {histNote("vllm:request_time_per_output_token_seconds", "(e2e − TTFT)/(tokens − 1), one per request")},
			telemetry.E2E:       {hist("vllm:e2e_request_latency_seconds")},
			Queue:               {hist("vllm:request_queue_time_seconds")},
			telemetry.Running:   {gauge("vllm:num_requests_running")},
			telemetry.Waiting:   {gauge("vllm:num_requests_waiting")},
			telemetry.KVCache:   {gaugeMax("vllm:kv_cache_usage_perc"), gaugeMax("vllm:gpu_cache_usage_perc")},
			telemetry.OutputTPS: {counter("vllm:generation_tokens_total")},
			// Request phases; default buckets start at 0.3 s.
			telemetry.PrefillTime: {hist("vllm:request_prefill_time_seconds")},
			telemetry.DecodeTime:  {hist("vllm:request_decode_time_seconds")},
			telemetry.RequestRate: {counterNote("vllm:request_success_total", "every finished_reason, aborts included")},
			telemetry.PromptTPS:   {counterNote("vllm:prompt_tokens_total", "n × prompt tokens when n > 1")},
			telemetry.Preemptions: {counter("vllm:num_preemptions_total")},
			telemetry.PrefixCacheHit: {
				ratio("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total", 1, "GPU prefix cache, token-based"),
				ratio("vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", 1, "GPU prefix cache (0.7–0.9 name)"),
				gaugeMaxNote("vllm:gpu_prefix_cache_hit_rate", "V0 gauge: the engine's own running hit rate"),
			},
			telemetry.SpecAccept: {
				ratio("vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_draft_tokens_total", 1, "accepted / draft tokens"),
				gaugeMaxNote("vllm:spec_decode_draft_acceptance_rate", "V0 gauge"),
			},
			telemetry.SpecAcceptLen: {{Name: "vllm:spec_decode_num_accepted_tokens_total", Type: CounterRatio,
				Per: "vllm:spec_decode_num_drafts_total", Offset: 1, Note: "1 + accepted tokens / drafts"}},
			telemetry.EngineReadBytes: {counterNote("vllm:estimated_read_bytes_per_gpu_total",
				"--enable-mfu-metrics; analytic per-step bytes, 0 while disabled")},
		},
		Errors: []ErrorCounters{{
			Failed: "vllm:request_success_total", FailedLabel: "finished_reason",
			FailedValues: []string{"abort", "error"}, All: "vllm:request_success_total",
		}},
		KV: KVInfo{Config: "vllm:cache_config_info", BlocksLabel: "num_gpu_blocks", BlockSizeLabel: "block_size"},
	}
}

// SGLang: model_name, or name in its first versions.
func sglang() Spec {
	return Spec{
		Engine:      telemetry.EngineSGLang,
		Title:       "SGLang",
		ModelLabels: []string{"model_name", "name"},
		Paths:       []string{"/metrics"},
		Prefixes:    []string{"sglang:"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {hist("sglang:time_to_first_token_seconds")},
			telemetry.ITL: {
				histNote("sglang:inter_token_latency_seconds", "token-weighted: count += tokens per chunk; compare means, not counts"),
				histNote("sglang:time_per_output_token_seconds", "old name (≤0.4), per-request time per output token"),
			},
			telemetry.E2E:         {hist("sglang:e2e_request_latency_seconds")},
			Queue:                 {hist("sglang:queue_time_seconds")},
			telemetry.Running:     {gauge("sglang:num_running_reqs")},
			telemetry.Waiting:     {gauge("sglang:num_queue_reqs")},
			telemetry.KVCache:     {gaugeMax("sglang:token_usage")},
			telemetry.OutputTPS:   {counter("sglang:generation_tokens_total")},
			telemetry.RequestRate: {counter("sglang:num_requests_total")},
			telemetry.PromptTPS:   {counter("sglang:prompt_tokens_total")},
			telemetry.PrefixCacheHit: {
				ratio("sglang:cached_tokens_total", "sglang:prompt_tokens_total", 1, "radix cache, token-based"),
				gaugeMaxNote("sglang:cache_hit_rate", "gauge: the scheduler's recent hit rate; largest over ranks"),
			},
			telemetry.SpecAccept:    {gaugeMaxNote("sglang:spec_accept_rate", "gauge: the scheduler's recent rate")},
			telemetry.SpecAcceptLen: {gaugeMaxNote("sglang:spec_accept_length", "gauge: tokens per verify step, recent")},
		},
		Errors: []ErrorCounters{{Failed: "sglang:num_aborted_requests_total", All: "sglang:num_requests_total"}},
		KV:     KVInfo{LiveTokens: "sglang:num_used_tokens"},
	}
}

// LMDeploy api_server: a vLLM V1 lookalike with its own ITL name.
func lmdeploy() Spec {
	return Spec{
		Engine:      telemetry.EngineLMDeploy,
		Title:       "LMDeploy",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/metrics"},
		Prefixes:    []string{"lmdeploy:"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {hist("lmdeploy:time_to_first_token_seconds")},
			telemetry.ITL: {
				histNote("lmdeploy:iter_token_latency", "per engine iteration"),
				histNote("lmdeploy:time_per_output_token_seconds", "per engine iteration"),
			},
			telemetry.E2E:         {hist("lmdeploy:e2e_request_latency_seconds")},
			Queue:                 {hist("lmdeploy:request_queue_time_seconds")},
			telemetry.Running:     {gauge("lmdeploy:num_requests_running")},
			telemetry.Waiting:     {gauge("lmdeploy:num_requests_waiting")},
			telemetry.KVCache:     {gaugeMax("lmdeploy:gpu_cache_usage_perc")},
			telemetry.OutputTPS:   {counter("lmdeploy:generation_tokens_total")},
			telemetry.RequestRate: {counterNote("lmdeploy:request_success_total", "every finished_reason")},
			telemetry.PromptTPS:   {counter("lmdeploy:prompt_tokens_total")},
		},
		Errors: []ErrorCounters{{
			Failed: "lmdeploy:request_success_total", FailedLabel: "finished_reason",
			FailedValues: []string{"abort", "error"}, All: "lmdeploy:request_success_total",
		}},
	}
}

// llama.cpp llama-server (--metrics): counters only, no labels.
func llamaCpp() Spec {
	return Spec{
		Engine:    telemetry.EngineLlamaCpp,
		Title:     "llama.cpp",
		ModelInfo: ModelInfo{Path: "/v1/models", Field: "data.0.id"},
		Paths:     []string{"/metrics"},
		Prefixes:  []string{"llamacpp:"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.ITL: {ratio("llamacpp:tokens_predicted_seconds_total", "llamacpp:tokens_predicted_total", 1,
				"mean per-slot decode time per token over the interval")},
			telemetry.Running:   {gauge("llamacpp:requests_processing")},
			telemetry.Waiting:   {gauge("llamacpp:requests_deferred")},
			telemetry.KVCache:   {gaugeMax("llamacpp:kv_cache_usage_ratio")},
			telemetry.OutputTPS: {counter("llamacpp:tokens_predicted_total")},
			telemetry.PromptTPS: {counter("llamacpp:prompt_tokens_total")},
		},
	}
}

// Hugging Face TGI: no model label (GET /info), no _total.
func tgi() Spec {
	return Spec{
		Engine:    telemetry.EngineTGI,
		Title:     "TGI",
		ModelInfo: ModelInfo{Path: "/info", Field: "model_id"},
		Paths:     []string{"/metrics"},
		Prefixes:  []string{"tgi_"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TPOT: {histNote("tgi_request_mean_time_per_token_duration",
				"inference time / generated tokens per request: includes prefill")},
			telemetry.E2E:         {hist("tgi_request_duration")},
			Queue:                 {hist("tgi_request_queue_duration")},
			telemetry.Running:     {gauge("tgi_batch_current_size")},
			telemetry.Waiting:     {gauge("tgi_queue_size")},
			telemetry.OutputTPS:   {{Name: "tgi_request_generated_tokens", Type: HistogramSum, Note: "counts finished requests only"}},
			telemetry.RequestRate: {counterNote("tgi_request_count", "requests received")},
			telemetry.PromptTPS: {{Name: "tgi_request_input_length", Type: HistogramSum,
				Note: "counted when a request is validated"}},
		},
		Errors: []ErrorCounters{{Failed: "tgi_request_failure", All: "tgi_request_count"}},
	}
}

// NVIDIA Triton: µs counters and an ms histogram.
func triton() Spec {
	return Spec{
		Engine:      telemetry.EngineTriton,
		Title:       "Triton",
		ModelLabels: []string{"model"},
		Paths:       []string{"/metrics"},
		Prefixes:    []string{"nv_inference_", "nv_trt_llm_"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {{Name: "nv_inference_first_response_histogram_ms", Type: Histogram, Scale: 1e-3,
				Note: "first response, not necessarily first token"}},
			telemetry.E2E: {ratio("nv_inference_request_duration_us", "nv_inference_request_success", 1e-6,
				"mean request duration over the interval")},
			Queue: {ratio("nv_inference_queue_duration_us", "nv_inference_request_success", 1e-6,
				"mean queue time over the interval")},
			telemetry.Running: {{Name: "nv_trt_llm_request_metrics", Type: Gauge, Match: map[string]string{"request_type": "active"}}},
			telemetry.Waiting: {
				{Name: "nv_trt_llm_request_metrics", Type: Gauge, Match: map[string]string{"request_type": "waiting"}},
				gauge("nv_inference_pending_request_count"),
			},
			telemetry.RequestRate: {counterNote("nv_inference_request_success", "successful requests only")},
			telemetry.KVCache: {{Name: "nv_trt_llm_kv_cache_block_metrics", Type: Gauge, Agg: Max,
				Match: map[string]string{"kv_cache_block_type": "fraction"}}},
		},
		Errors: []ErrorCounters{{Failed: "nv_inference_request_failure", Succeeded: "nv_inference_request_success"}},
	}
}

// NVIDIA NIM for LLMs: unprefixed vLLM names on /v1/metrics.
func nim() Spec {
	return Spec{
		Engine:      telemetry.EngineNIM,
		Title:       "NIM",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/v1/metrics", "/metrics"},
		Markers:     []string{"num_requests_running", "num_requests_waiting", "gpu_cache_usage_perc", "num_request_max", "request_failure_total", "request_finish_total"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT:        {hist("time_to_first_token_seconds")},
			telemetry.ITL:         {histNote("time_per_output_token_seconds", "vLLM TPOT name: step time")},
			telemetry.E2E:         {hist("e2e_request_latency_seconds")},
			telemetry.Running:     {gauge("num_requests_running")},
			telemetry.Waiting:     {gauge("num_requests_waiting")},
			telemetry.KVCache:     {gaugeMax("gpu_cache_usage_perc")},
			telemetry.OutputTPS:   {counter("generation_tokens_total")},
			telemetry.RequestRate: {counter("request_finish_total")},
			telemetry.PromptTPS:   {counter("prompt_tokens_total")},
		},
		Errors: []ErrorCounters{{Failed: "request_failure_total", Succeeded: "request_success_total"}},
	}
}

// TensorRT-LLM trtllm-serve (unprefixed vLLM names) and NVIDIA Dynamo
// (trtllm_ prefix).
func trtllm() Spec {
	return Spec{
		Engine:      telemetry.EngineTRTLLM,
		Title:       "TensorRT-LLM",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/prometheus/metrics", "/metrics"},
		Prefixes:    []string{"trtllm_"},
		Markers:     []string{"request_queue_time_seconds"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT:    {hist("time_to_first_token_seconds"), hist("trtllm_time_to_first_token_seconds")},
			telemetry.ITL:     {hist("time_per_output_token_seconds"), hist("trtllm_time_per_output_token_seconds")},
			telemetry.E2E:     {hist("e2e_request_latency_seconds"), hist("trtllm_e2e_request_latency_seconds")},
			Queue:             {hist("request_queue_time_seconds"), hist("trtllm_request_queue_time_seconds")},
			telemetry.Running: {gauge("trtllm_num_requests_running")},
			telemetry.Waiting: {gauge("trtllm_num_requests_waiting")},
			telemetry.KVCache: {gaugeMax("trtllm_kv_cache_utilization")},
			telemetry.RequestRate: {counterNote("request_success_total", "every finished_reason"),
				counterNote("trtllm_request_success_total", "every finished_reason")},
		},
		Errors: []ErrorCounters{{
			Failed: "request_success_total", FailedLabel: "finished_reason",
			FailedValues: []string{"abort", "error"}, All: "request_success_total",
		}, {
			Failed: "trtllm_request_success_total", FailedLabel: "finished_reason",
			FailedValues: []string{"abort", "error"}, All: "trtllm_request_success_total",
		}},
	}
}
