package engines

import "github.com/ttftop/ttftop/telemetry"

// All returns every engine spec in detection order. Each call builds a
// fresh table, so callers may keep and modify their copy.
func All() []Spec {
	return []Spec{vllm(), sglang(), lmdeploy(), llamaCpp(), tgi(), triton(), nim(), trtllm(), dynamoFrontend(), llmdRouter()}
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

func hist(name string) Alias            { return Alias{Name: name, Type: Histogram} }
func histNote(name, note string) Alias  { return Alias{Name: name, Type: Histogram, Note: note} }
func gauge(name string) Alias           { return Alias{Name: name, Type: Gauge} }
func gaugeMax(name string) Alias        { return Alias{Name: name, Type: Gauge, Agg: Max} }
func gaugeNote(name, note string) Alias { return Alias{Name: name, Type: Gauge, Note: note} }
func counter(name string) Alias         { return Alias{Name: name, Type: Counter} }
func counterNote(name, note string) Alias {
	return Alias{Name: name, Type: Counter, Note: note}
}

// poolGauge is a router's gauge of its pool, labelled by the pool's name
// and no model: the figure of every model the router serves.
func poolGauge(name string, agg Agg, note string) Alias {
	return Alias{Name: name, Type: Gauge, Agg: agg, PageWide: true, Note: note}
}

// perGPUCounter is a counter each rank exposes per GPU: averaged over
// ranks, never summed.
func perGPUCounter(name, note string) Alias {
	return Alias{Name: name, Type: Counter, Agg: Mean, Note: note}
}
func gaugeMaxNote(name, note string) Alias {
	return Alias{Name: name, Type: Gauge, Agg: Max, Note: note}
}
func ratio(num, den string, scale float64, note string) Alias {
	return Alias{Name: num, Type: CounterRatio, Per: den, Scale: scale, Note: note}
}

// share is hits / (hits + misses) from two counters of the two outcomes.
func share(hits, misses, note string) Alias {
	return Alias{Name: hits, Type: CounterShare, Per: misses, Note: note}
}

// vllmTPOTBuckets are vLLM's request_time_per_output_token_seconds
// bounds, as in the capture vllm-v0.27-xpu-specdecode-mfu-metrics.txt
// (internal/fixtures/testdata/metrics): nothing resolves below 10 ms.
func vllmTPOTBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
}

// perStep marks a histogram observed once per engine step (Alias.PerStep).
func perStep(a Alias) Alias {
	a.PerStep = true
	return a
}

func withBuckets(a Alias, bounds []float64) Alias {
	a.Buckets = bounds
	return a
}

// vLLM V0 (≤0.7) and V1 (0.8+; adds the engine label and *_created gauges).
//
// Source: the captures vllm-v0.4-metrics.txt, vllm-v0.10-metrics.txt and
// vllm-v0.27-xpu-specdecode-mfu-metrics.txt hold every name below except
// three: vllm:gpu_prefix_cache_{hits,queries}_total (V1 before 0.10, hidden
// from 0.10 and removed in 0.12: vLLM's v1/metrics/loggers.py, "DEPRECATED:
// Use vllm:prefix_cache_queries"), vllm:gpu_prefix_cache_hit_rate and
// vllm:spec_decode_draft_acceptance_rate (V0 gauges of
// vllm/engine/metrics.py), read from vLLM's source only.
// vllm:lora_requests_info (labels max_lora, running_lora_adapters,
// waiting_lora_adapters; value the time of the change; no model_name) from
// vLLM's v1/metrics/loggers.py and pages quoted in llm-d-inference-sim's
// tests (store file id 5568918933). vllm:num_requests_waiting_by_reason
// and vllm:prompt_tokens_by_source_total
// are in the 0.27 capture. The NIXL connector's families
// (vllm:nixl_xfer_time_seconds and vllm:nixl_bytes_transferred histograms,
// vllm:nixl_num_failed_transfers counter; labels model_name, engine) are
// from vLLM's source only, vllm/distributed/kv_transfer/kv_connector/v1/
// nixl_connector.py NixlPromMetrics (store file id 54565547523): no
// capture was found, so they are tested on table-generated pages.
// Removed names (time_per_output_token_seconds, gpu_cache_usage_perc,
// gpu_prefix_cache_*) come after their successors: read only where the
// successor is absent, an older version.
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
				perStep(histNote("vllm:inter_token_latency_seconds", itlNote)),
				perStep(histNote("vllm:time_per_output_token_seconds", itlNote+"; removed name (deprecated 0.11, removed 0.13), read from older versions only")),
			},
			telemetry.TPOT: {withBuckets(histNote("vllm:request_time_per_output_token_seconds", "(e2e − TTFT)/(tokens − 1), one per request"),
				vllmTPOTBuckets())},
			telemetry.E2E:     {hist("vllm:e2e_request_latency_seconds")},
			Queue:             {hist("vllm:request_queue_time_seconds")},
			telemetry.Running: {gauge("vllm:num_requests_running")},
			telemetry.Waiting: {gauge("vllm:num_requests_waiting")},
			telemetry.KVCache: {gaugeMax("vllm:kv_cache_usage_perc"),
				gaugeMaxNote("vllm:gpu_cache_usage_perc", "removed name (deprecated 0.9), read from older versions only")},
			telemetry.OutputTPS: {counter("vllm:generation_tokens_total")},
			// Request phases; default buckets start at 0.3 s.
			telemetry.PrefillTime: {hist("vllm:request_prefill_time_seconds")},
			telemetry.DecodeTime:  {hist("vllm:request_decode_time_seconds")},
			telemetry.RequestRate: {counterNote("vllm:request_success_total", "every finished_reason, aborts included")},
			telemetry.PromptTPS:   {counterNote("vllm:prompt_tokens_total", "n × prompt tokens when n > 1")},
			telemetry.Preemptions: {counter("vllm:num_preemptions_total")},
			telemetry.PrefixCacheHit: {
				ratio("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total", 1, "GPU prefix cache, token-based"),
				ratio("vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total", 1,
					"GPU prefix cache; removed name (0.7–0.9), read from older versions only"),
				gaugeMaxNote("vllm:gpu_prefix_cache_hit_rate", "V0 gauge: the engine's own running hit rate"),
			},
			telemetry.SpecAccept: {
				ratio("vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_draft_tokens_total", 1, "accepted / draft tokens"),
				gaugeMaxNote("vllm:spec_decode_draft_acceptance_rate", "V0 gauge"),
			},
			telemetry.SpecAcceptLen: {{Name: "vllm:spec_decode_num_accepted_tokens_total", Type: CounterRatio,
				Per: "vllm:spec_decode_num_drafts_total", Offset: 1, Note: "1 + accepted tokens / drafts"}},
			telemetry.EngineReadBytes: {perGPUCounter("vllm:estimated_read_bytes_per_gpu_total",
				"--enable-mfu-metrics; analytic per-step bytes, 0 while disabled")},
			telemetry.KVTransferTime: {histNote("vllm:nixl_xfer_time_seconds", "NIXL connector: one observation per transfer")},
			telemetry.KVTransferBytes: {{Name: "vllm:nixl_bytes_transferred", Type: HistogramSum,
				Note: "NIXL connector: the sum of its bytes-per-transfer histogram"}},
			telemetry.KVTransferFailures: {counterNote("vllm:nixl_num_failed_transfers_total", "NIXL connector")},
			telemetry.KVTransferPromptTPS: {{Name: "vllm:prompt_tokens_by_source_total", Type: Counter,
				Match: map[string]string{"source": "external_kv_transfer"}, Note: "source=external_kv_transfer"}},
			telemetry.WaitingDeferred: {{Name: "vllm:num_requests_waiting_by_reason", Type: Gauge,
				Match: map[string]string{"reason": "deferred"}, Note: "reason=deferred (the other reason is capacity)"}},
		},
		Errors: []ErrorCounters{{
			Failed: "vllm:request_success_total", FailedLabel: "finished_reason",
			FailedValues: []string{"abort", "error"}, All: "vllm:request_success_total",
		}},
		KV: KVInfo{Config: "vllm:cache_config_info", BlocksLabel: "num_gpu_blocks", BlockSizeLabel: "block_size"},
		// No model label: the page's model (the base).
		LoRA: LoRAInfo{Info: "vllm:lora_requests_info", RunningLabel: "running_lora_adapters",
			WaitingLabel: "waiting_lora_adapters", MaxLabel: "max_lora"},
		// The data-parallel engine's index: engine="0" on every engine
		// series of the 0.10 and 0.27 captures; loggers.py labels each
		// engine of a DP server with its index (per_engine_labelvalues,
		// store file id 27791212103).
		RankLabels: []string{"engine"},
	}
}

// SGLang: model_name, or name in its first versions.
//
// Source: sgl-project/sglang @ 93d04878cfb9b08645fae7b11bd340ee33b34acf :
// python/sglang/srt/metrics/collector.py (SchedulerMetricsCollector,
// TokenizerMetricsCollector); the old names from the capture
// sglang-metrics.txt; sglang:num_retracted_requests_total and the
// --enable-mfu-metrics counters from later versions of collector.py and of
// SGLang's metrics test (store file ids 2817318981, 69212803927) and its
// production_metrics.md reference (store file id 54655348608). Not read:
// sglang:num_retracted_reqs, a gauge of the last step's retractions.
// The P/D families sglang:kv_transfer_latency_ms and
// sglang:num_transfer_failed_reqs_total are from production_metrics.md
// (store file id 54655348608) and collector.py: a histogram (buckets 1 …
// 5000 ms) in current versions, read as the KV transfer time; a gauge of
// the last transfer in collector.py @
// 00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538, not read (one transfer is no
// distribution; a direct scrape skips a family declared gauge where the
// table reads a histogram). Both are observed on the prefill worker when a
// request's KV has been sent (disaggregation/prefill.py
// process_disagg_prefill_inflight_queue, store file id 58615488336), so
// they are prefill-pool figures. SGLang's router posts each request to
// the prefill and the decode worker at once (mini_lb's asyncio.gather,
// store file id 9768748569), so a decode worker's TTFT spans the prefill
// and the transfer: its P/D TTFT is not split (docs/disaggregated.md). The P/D queue gauges of the same
// collector.py: sglang:num_decode_transfer_queue_reqs (a decode worker's
// requests whose KV is in transfer, vLLM's deferred waiting) is read as
// waiting_deferred; not read: num_decode_prealloc_queue_reqs (waiting for
// KV memory to be reserved), num_prefill_prealloc_queue_reqs (renamed
// num_prefill_bootstrap_queue_reqs in later versions: prefill requests
// waiting for their decode worker's handshake) and
// num_prefill_inflight_queue_reqs (KV being sent), which no signal
// defines yet. All are registered on every worker and set only in their
// role, so a zero says nothing of the role; SGLang's own role is its
// engine_type label (prefill, decode; unified when not disaggregated:
// disagg_mode_str in collector.py, and engine_type="unified" in Dynamo's
// SGLang worker example, docs/observability/metrics_examples/sglang.log).
// No capture of a P/D worker: tested on table-generated pages. Not read:
// sglang:kv_transfer_speed_gb_s (a per-request speed, not a throughput),
// sglang:kv_transfer_total_mb (whether MB is 10⁶ or 2²⁰ bytes is not said).
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
			telemetry.OutputTPS:   {counterNote("sglang:generation_tokens_total", "counted when a request finishes")},
			telemetry.RequestRate: {counterNote("sglang:num_requests_total", "finished requests")},
			telemetry.PromptTPS:   {counterNote("sglang:prompt_tokens_total", "counted when a request finishes")},
			telemetry.PrefixCacheHit: {
				ratio("sglang:cached_tokens_total", "sglang:prompt_tokens_total", 1, "radix cache, token-based, per finished request"),
				gaugeMaxNote("sglang:cache_hit_rate", "gauge: the scheduler's recent hit rate; largest over ranks"),
			},
			telemetry.SpecAccept:    {gaugeMaxNote("sglang:spec_accept_rate", "gauge: accepted / draft tokens of the last batch")},
			telemetry.SpecAcceptLen: {gaugeMaxNote("sglang:spec_accept_length", "gauge: tokens per verify step, recent")},
			telemetry.Preemptions: {counterNote("sglang:num_retracted_requests_total",
				"retractions: running requests sent back to the queue, KV freed")},
			telemetry.EngineReadBytes: {perGPUCounter("sglang:estimated_read_bytes_per_gpu_total",
				"--enable-mfu-metrics; estimated per-GPU bytes")},
			telemetry.KVTransferTime: {{Name: "sglang:kv_transfer_latency_ms", Type: Histogram, Scale: 1e-3,
				Note: "P/D: per transferred request, timed on the prefill worker"}},
			telemetry.KVTransferFailures: {counterNote("sglang:num_transfer_failed_reqs_total", "P/D: requests whose KV transfer failed")},
			telemetry.WaitingDeferred: {gaugeNote("sglang:num_decode_transfer_queue_reqs",
				"P/D decode worker: requests whose KV is in transfer; SGLang keeps them beside its waiting queue, not in it")},
		},
		Errors:    []ErrorCounters{{Failed: "sglang:num_aborted_requests_total", All: "sglang:num_requests_total"}},
		KV:        KVInfo{LiveTokens: "sglang:num_used_tokens"},
		RoleLabel: "engine_type",
		// A scheduler started with a data-parallel rank labels its series
		// dp_rank (its labels in python/sglang/srt/metrics/collector.py,
		// store file id 54493583113); no capture has it: tested on
		// simulated pages.
		RankLabels: []string{"dp_rank"},
	}
}

// lmdeployFailures are the finished_reason values of LMDeploy's
// request_success_total that are not a normal finish: the label is
// str(ResponseType.X) of lmdeploy/messages.py (FINISH is the normal end,
// SUCCESS an intermediate status never counted).
func lmdeployFailures() []string {
	return []string{
		"ResponseType.ENGINE_STOP_ERROR", "ResponseType.SESSION_REPEAT", "ResponseType.SESSION_NOT_EXIST",
		"ResponseType.HANDLER_NOT_EXIST", "ResponseType.INPUT_LENGTH_ERROR", "ResponseType.INTERNAL_ENGINE_ERROR",
		"ResponseType.CANCEL", "ResponseType.PREFIX_CACHE_CONFLICT_INTERACTIVE_MODE",
	}
}

// LMDeploy api_server (--enable-metrics): a vLLM V1 lookalike with its own
// ITL name, labels model_name and engine (data-parallel rank), and no
// _created gauges (prometheus_client.disable_created_metrics()).
//
// Source: InternLM/lmdeploy lmdeploy/metrics/loggers.py (PrometheusStatLogger)
// @ 7c8d16f58b94abb6f69dc6f082aa20db1b9b5587, and a later version of the same
// file (store file id 55133863270; the store does not name its repository)
// that adds the spec_decode_* counters; the prefix_cache_hit_rate gauge
// from a metrics unit test of LMDeploy (store file id 70527450446);
// ResponseType from lmdeploy/messages.py.
// No capture: documentation and source only. No preemption counter.
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
				// Seconds, though the name lacks the suffix.
				perStep(histNote("lmdeploy:iter_token_latency", "time between a request's engine iterations")),
				histNote("lmdeploy:time_per_output_token_seconds", "iteration time / tokens of that iteration"),
			},
			telemetry.E2E:         {hist("lmdeploy:e2e_request_latency_seconds")},
			Queue:                 {hist("lmdeploy:request_queue_time_seconds")},
			telemetry.PrefillTime: {hist("lmdeploy:request_prefill_time_seconds")},
			telemetry.DecodeTime:  {hist("lmdeploy:request_decode_time_seconds")},
			telemetry.Running:     {gauge("lmdeploy:num_requests_running")},
			telemetry.Waiting:     {gauge("lmdeploy:num_requests_waiting")},
			telemetry.KVCache:     {gaugeMax("lmdeploy:gpu_cache_usage_perc")},
			telemetry.OutputTPS:   {counter("lmdeploy:generation_tokens_total")},
			telemetry.RequestRate: {counterNote("lmdeploy:request_success_total", "every finished_reason (ResponseType.*)")},
			telemetry.PromptTPS:   {counter("lmdeploy:prompt_tokens_total")},
			telemetry.PrefixCacheHit: {gaugeMaxNote("lmdeploy:prefix_cache_hit_rate",
				"gauge: the scheduler's hit rate; largest over ranks")},
			telemetry.SpecAccept: {ratio("lmdeploy:spec_decode_num_accepted_tokens_total",
				"lmdeploy:spec_decode_num_draft_tokens_total", 1, "accepted / draft tokens")},
			telemetry.SpecAcceptLen: {{Name: "lmdeploy:spec_decode_num_accepted_tokens_total", Type: CounterRatio,
				Per: "lmdeploy:spec_decode_num_drafts_total", Offset: 1, Note: "1 + accepted tokens / drafts"}},
		},
		Errors: []ErrorCounters{{
			Failed: "lmdeploy:request_success_total", FailedLabel: "finished_reason",
			FailedValues: lmdeployFailures(), All: "lmdeploy:request_success_total",
		}},
	}
}

// llama.cpp llama-server (--metrics): no labels, no histograms; counters
// of tokens and of the seconds spent on them. Its gauges are averages over
// the window since the previous scrape (reset at every scrape), so they
// are not read.
//
// Source: ggml-org/llama.cpp tools/server/server-task.cpp
// server_task_result_metrics::to_metrics (store file id 71625749689, the
// version a downstream pins at c1d0e7a004015f23bc0233470b747b596f29b264;
// the stored upstream copies, server-task.cpp @ 17f5f8a and
// server-context.cpp @ 001d906a, call it); the older gauges
// kv_cache_usage_ratio from the capture ik-llamacpp-server-metrics.txt.
// to_metrics there documents prompt_tokens_total as "excluding cached
// tokens" and prompt_tokens_cached_total as "reused from the cache", so the
// prefix-cache hit rate is cached / (cached + evaluated): a CounterShare.
// The capture predates prompt_tokens_cached_total.
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
			telemetry.Running: {gauge("llamacpp:requests_processing")},
			telemetry.Waiting: {gauge("llamacpp:requests_deferred")},
			// Removed from mainline in 2025; forks and older builds have it.
			telemetry.KVCache:   {gaugeMax("llamacpp:kv_cache_usage_ratio")},
			telemetry.OutputTPS: {counter("llamacpp:tokens_predicted_total")},
			telemetry.PromptTPS: {counterNote("llamacpp:prompt_tokens_total", "prompt tokens evaluated: cached tokens excluded")},
			telemetry.PrefixCacheHit: {share("llamacpp:prompt_tokens_cached_total", "llamacpp:prompt_tokens_total",
				"prompt tokens reused from the slot's cache / (reused + evaluated)")},
			telemetry.SpecAccept: {ratio("llamacpp:spec_decode_num_accepted_tokens_total",
				"llamacpp:spec_decode_num_draft_tokens_total", 1, "accepted / draft tokens")},
			telemetry.SpecAcceptLen: {{Name: "llamacpp:spec_decode_num_accepted_tokens_total", Type: CounterRatio,
				Per: "llamacpp:spec_decode_num_drafts_total", Offset: 1, Note: "1 + accepted tokens / verification steps"}},
		},
	}
}

// Hugging Face TGI: no model label (GET /info), no _total.
//
// Source: the capture tgi-metrics-excerpt.txt (DataDog's fixture; its full
// original also holds tgi_request_input_length and
// tgi_request_generated_tokens, see the MANIFEST).
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

// NVIDIA Triton: µs counters and an ms histogram; the TensorRT-LLM
// backend's batch-manager gauges with request_type and kv_cache_block_type
// labels.
//
// Source: the capture triton-metrics-excerpt.txt (nv_inference_*);
// nv_inference_first_response_histogram_ms (opt-in, --metrics-config
// histogram_latencies=true) from Triton's own metrics tests (store file id
// 34009342868); nv_trt_llm_* from triton-inference-server/tensorrtllm_backend
// inflight_batcher_llm/src/custom_metrics_reporter/custom_metrics_reporter.cc
// (labels model, version; request_type active/max/scheduled/context @
// 7f9aa4680aafaebce2d7576b5a40d5ddc7c3cbaa, plus waiting, and
// kv_cache_block_type fraction, in a later stored version, store file id
// 304365448): older backends have neither, so Waiting falls back to
// Triton's pending count and KV use is missing there.
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

// NVIDIA NIM for LLMs: unprefixed vLLM V0 names on /v1/metrics, label
// model_name, NIM's own num_request_max and request_finish/success/failure
// counters.
//
// Source: the capture nim-llama3.1-8b-metrics.txt (DataDog's NIM fixture)
// for every name below; docs.nvidia.com/nim/large-language-models
// observability page for the path. Its time_per_output_token_seconds
// counts one observation per token after the first (169 for 174 tokens of
// 5 requests): a per-token histogram, read as ITL.
func nim() Spec {
	return Spec{
		Engine:      telemetry.EngineNIM,
		Title:       "NIM",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/v1/metrics", "/metrics"},
		Markers:     []string{"num_requests_running", "num_requests_waiting", "gpu_cache_usage_perc", "num_request_max", "request_failure_total", "request_finish_total"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT:        {hist("time_to_first_token_seconds")},
			telemetry.ITL:         {histNote("time_per_output_token_seconds", "vLLM V0's TPOT name: one observation per token")},
			telemetry.E2E:         {hist("e2e_request_latency_seconds")},
			telemetry.Running:     {gauge("num_requests_running")},
			telemetry.Waiting:     {gauge("num_requests_waiting")},
			telemetry.KVCache:     {gaugeMax("gpu_cache_usage_perc")},
			telemetry.OutputTPS:   {counter("generation_tokens_total")},
			telemetry.RequestRate: {counterNote("request_finish_total", "every finished_reason")},
			telemetry.PromptTPS:   {counter("prompt_tokens_total")},
		},
		Errors: []ErrorCounters{{Failed: "request_failure_total", Succeeded: "request_success_total"}},
	}
}

// trtllmFailures are the finished_reason values of TensorRT-LLM's
// request_success_total that are not a normal finish (its CompletionOutput
// finish_reason is one of stop, length, timeout, cancelled).
func trtllmFailures() []string { return []string{"cancelled", "timeout"} }

// TensorRT-LLM trtllm-serve on /prometheus/metrics (/metrics is JSON):
// the trtllm_ prefixed names of current versions (NVIDIA Dynamo passes
// them through unchanged), and the unprefixed names of the first versions.
// Labels model_name and engine_type.
//
// Source: tensorrt_llm/metrics/collector.py of NVIDIA/TensorRT-LLM @
// 89fd9b74ab7ae753b4c6b3db25a400dca7ea54a0 (the unprefixed names) and of
// the fork lishicheng1996-nv/TensorRT-LLM @
// ec56e7b1afa3d57b2d0a7a6c86fdb416d4e45b3e (2026, metric_prefix "trtllm_":
// request_success, e2e, TTFT, TPOT, queue time, kv_cache_hit_rate,
// kv_cache_utilization). The other trtllm_ names (running/waiting, prefill
// and decode time, token counters, cached prompt tokens, spec decode) are
// from two further stored versions of that file in forks (store file ids
// 56480326944 and 51779265821, which name running/waiting differently),
// not known to be in a release: where absent they are simply not read. Its
// TPOT is (last token − first token)/(tokens − 1) per finished request
// (process_req_perf_metrics), so time_per_output_token_seconds is TPOT,
// not ITL. The KV-block counters trtllm_kv_cache_reused_blocks_total and
// trtllm_kv_cache_missed_blocks_total (Counters "kv_cache_reused_blocks",
// "kv_cache_missed_blocks": cache hits and misses, incremented by the
// deltas of kvCacheStats reusedBlocks/missedBlocks) are from a further
// stored version of collector.py (store file id 51768800280, which has no
// cached-prompt counter): block-granular, so read after the token counters.
// Model label also in the ai-dynamo docs. The capture
// dynamo-trtllm-worker-qwen3-0.6b-metrics.txt (a TensorRT-LLM worker
// behind Dynamo, from Dynamo's docs) holds the trtllm_ request histograms
// (TTFT, TPOT, e2e, queue) and request_success_total with the labels
// engine_type and model_name; its TPOT takes one observation per request.
// The other names: source only.
func trtllm() Spec {
	return Spec{
		Engine:      telemetry.EngineTRTLLM,
		Title:       "TensorRT-LLM",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/prometheus/metrics", "/metrics"},
		Prefixes:    []string{"trtllm_"},
		Markers:     []string{"request_queue_time_seconds"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {hist("trtllm_time_to_first_token_seconds"), hist("time_to_first_token_seconds")},
			telemetry.TPOT: {
				histNote("trtllm_time_per_output_token_seconds", "(last − first token)/(tokens − 1), one per request"),
				histNote("time_per_output_token_seconds", "(last − first token)/(tokens − 1), one per request"),
			},
			telemetry.E2E:         {hist("trtllm_e2e_request_latency_seconds"), hist("e2e_request_latency_seconds")},
			Queue:                 {hist("trtllm_request_queue_time_seconds"), hist("request_queue_time_seconds")},
			telemetry.PrefillTime: {hist("trtllm_request_prefill_time_seconds")},
			telemetry.DecodeTime:  {hist("trtllm_request_decode_time_seconds")},
			telemetry.Running:     {gauge("trtllm_num_requests_running"), gauge("trtllm_num_active_requests")},
			telemetry.Waiting:     {gauge("trtllm_num_requests_waiting"), gauge("trtllm_server_queue_length")},
			telemetry.KVCache:     {gaugeMax("trtllm_kv_cache_utilization")},
			telemetry.OutputTPS:   {counter("trtllm_generation_tokens_total")},
			telemetry.PromptTPS:   {counter("trtllm_prompt_tokens_total")},
			telemetry.RequestRate: {counterNote("trtllm_request_success_total", "every finished_reason"),
				counterNote("request_success_total", "every finished_reason")},
			telemetry.PrefixCacheHit: {
				ratio("trtllm_prompt_cached_tokens_total", "trtllm_prompt_tokens_total", 1, "prompt tokens served from the KV cache"),
				share("trtllm_kv_cache_reused_blocks_total", "trtllm_kv_cache_missed_blocks_total",
					"KV blocks reused / (reused + missed): block-based"),
				gaugeMaxNote("trtllm_kv_cache_hit_rate", "gauge: the KV cache manager's block hit rate"),
			},
			telemetry.SpecAccept: {ratio("trtllm_spec_decode_num_accepted_tokens_total",
				"trtllm_spec_decode_num_draft_tokens_total", 1, "accepted / draft tokens")},
			telemetry.SpecAcceptLen: {gaugeMaxNote("trtllm_spec_decode_acceptance_length", "gauge: the last iteration's acceptance length")},
		},
		Errors: []ErrorCounters{{
			Failed: "request_success_total", FailedLabel: "finished_reason",
			FailedValues: trtllmFailures(), All: "request_success_total",
		}, {
			Failed: "trtllm_request_success_total", FailedLabel: "finished_reason",
			FailedValues: trtllmFailures(), All: "trtllm_request_success_total",
		}},
	}
}

// NVIDIA Dynamo's OpenAI-compatible HTTP frontend, in front of vLLM,
// SGLang or TensorRT-LLM workers (whose own pages keep their engine's
// names): label model; the prefix is DYN_METRICS_PREFIX's, dynamo_frontend
// by default.
//
// Source: ai-dynamo/dynamo @ 79a21ca4f5200e76a2bcc19580eb6176298c7e59 :
// lib/llm/src/http/service/metrics.rs (Metrics::new: label sets, the
// status values success/error) and @ 4415465e3e0d30b12163c3c3f15d49ed78b300a8
// : lib/runtime/src/metrics/prometheus_names.rs (frontend_service names;
// the version @ 04070c75b52f33346a2d5723eed93a0093e77bad has the same).
// Every name read is in the capture dynamo-frontend-qwen3-0.6b-metrics.txt
// (Dynamo's docs/observability/metrics_examples/fe.log: one unary request;
// its ITL counts 299 gaps for 300 tokens, a per-token histogram); the
// error status value is from metrics.rs only. Not read:
// dynamo_frontend_cached_tokens, a per-request histogram whose hit rate
// would be a ratio of two histogram sums; the router's kv_hit_rate, a
// prediction at routing time, not a measured hit; the per-worker gauges
// (worker_active_decode_blocks, worker_active_prefill_tokens,
// worker_last_time_to_first_token_seconds, labels worker_id, dp_rank,
// worker_type: the last request's figure, not a distribution) and
// router_queue_pending_requests (per worker_type); the model_* config
// gauges, whose model label keeps the served name's case
// ("Qwen/Qwen3-0.6B" beside "qwen/qwen3-0.6b" in the capture). The
// workers' own pages keep their engine's names beside dynamo_component_*
// (the work handler's request counters, not read: the engine's own say
// more).
func dynamoFrontend() Spec {
	return Spec{
		Engine:      telemetry.EngineDynamo,
		Title:       "Dynamo",
		ModelLabels: []string{"model"},
		Paths:       []string{"/metrics"},
		Prefixes:    []string{"dynamo_frontend_"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {histNote("dynamo_frontend_time_to_first_token_seconds", "at the frontend: includes routing to a worker")},
			telemetry.ITL:  {hist("dynamo_frontend_inter_token_latency_seconds")},
			telemetry.E2E:  {hist("dynamo_frontend_request_duration_seconds")},
			telemetry.Running: {gaugeNote("dynamo_frontend_inflight_requests",
				"requests in the frontend, from arrival until the response ends")},
			telemetry.Waiting: {gaugeNote("dynamo_frontend_queued_requests",
				"requests before their first token: queueing and prefill")},
			telemetry.OutputTPS:   {counter("dynamo_frontend_output_tokens_total")},
			telemetry.PromptTPS:   {{Name: "dynamo_frontend_input_sequence_tokens", Type: HistogramSum, Note: "input tokens per request"}},
			telemetry.RequestRate: {counterNote("dynamo_frontend_requests_total", "status success and error")},
		},
		Errors: []ErrorCounters{{
			Failed: "dynamo_frontend_requests_total", FailedLabel: "status",
			FailedValues: []string{"error"}, All: "dynamo_frontend_requests_total",
		}},
	}
}

// The llm-d router's endpoint picker (EPP), in front of a model's pools:
// what users get through the gateway, per model_name (the model asked
// for; target_model_name is the one served, an adapter or a base, and is
// summed over). Current versions write llm_d_epp_* and still the
// Gateway API Inference Extension's inference_objective_* beside them, read
// as the fallback. Its pool gauges (ready_endpoints, average_queue_size,
// average_kv_cache_utilization; the old inference_pool_ready_pods and
// inference_pool_average_* beside them) carry the pool's name, not a
// model: read as the pool's figures on every model row of the router (one
// router, one InferencePool, as llm-d deploys them). Their names and the
// name label from the llm-d router's docs ("Inference pool" table, store
// file id 59771664966) and the Gateway API Inference Extension's metrics
// table (store file id 7135792075); the KV figure is the mean of the pods'
// own 0–1 fractions. No capture: tested on the simulator's router page.
//
// Source: the llm-d router's pkg/epp/metrics/metrics.go (store file ids
// 54664698492 and 60103722782: request_ttft_seconds "from request received
// to first response byte", request_streaming_tpot_seconds "(e2e − TTFT) /
// (output_tokens − 1)", request_streaming_itl_seconds, request_running,
// request_ntpot_seconds "end-to-end latency divided by output token
// count"), its docs/metrics.md table (store file id 56037206568), and the
// Gateway API Inference Extension's metrics.go (store file id 7740810667:
// inference_objective_request_ttft_seconds, request_total,
// request_error_total with error_code). No capture: tested on
// table-generated pages. request_ntpot_seconds is not TPOT (it includes
// TTFT), so it is not read as TPOT. The router's own SLO-violation
// counters, inference_objective_request_{ttft,tpot}_slo_violation_total
// (per model_name and target_model_name), are from llm-d's
// predicted-latency guide (store file id 55025291835), no capture; read
// as the router's misses of its own objectives.
func llmdRouter() Spec {
	const gateway = "at the router: includes routing and the network to the pod"
	return Spec{
		Engine:      telemetry.EngineLLMD,
		Title:       "llm-d router",
		ModelLabels: []string{"model_name"},
		Paths:       []string{"/metrics"},
		Prefixes:    []string{"llm_d_epp_", "inference_objective_"},
		Signals: map[telemetry.Signal][]Alias{
			telemetry.TTFT: {histNote("llm_d_epp_request_ttft_seconds", gateway),
				histNote("inference_objective_request_ttft_seconds", gateway+"; the old name, still written beside")},
			telemetry.TPOT: {histNote("llm_d_epp_request_streaming_tpot_seconds", "(e2e − TTFT)/(tokens − 1) per streaming request, "+gateway)},
			telemetry.ITL:  {histNote("llm_d_epp_request_streaming_itl_seconds", "gaps between response chunks, "+gateway)},
			telemetry.E2E: {histNote("llm_d_epp_request_duration_seconds", gateway),
				histNote("inference_objective_request_duration_seconds", gateway+"; the old name")},
			telemetry.Running: {gaugeNote("llm_d_epp_request_running", "requests in flight through the router")},
			telemetry.RequestRate: {counterNote("llm_d_epp_request_total", "requests received by the router"),
				counterNote("inference_objective_request_total", "requests received; the old name")},
			telemetry.RouterTTFTMisses: {counterNote("inference_objective_request_ttft_slo_violation_total",
				"the router's own count against the TTFT goal its requests carry")},
			telemetry.RouterTPOTMisses: {counterNote("inference_objective_request_tpot_slo_violation_total",
				"the router's own count against the TPOT goal its requests carry")},
			telemetry.RouterPoolReady: {poolGauge("llm_d_epp_ready_endpoints", Sum, "ready endpoints of the router's pool"),
				poolGauge("inference_pool_ready_pods", Sum, "ready pods of the router's pool; the old name")},
			telemetry.RouterPoolQueue: {poolGauge("llm_d_epp_average_queue_size", Max, "the pool's mean queue per endpoint"),
				poolGauge("inference_pool_average_queue_size", Max, "the pool's mean queue per endpoint; the old name")},
			telemetry.RouterPoolKV: {poolGauge("llm_d_epp_average_kv_cache_utilization", Max, "the pool's mean KV-cache use"),
				poolGauge("inference_pool_average_kv_cache_utilization", Max, "the pool's mean KV-cache use; the old name")},
		},
		Errors: []ErrorCounters{
			{Failed: "llm_d_epp_request_error_total", All: "llm_d_epp_request_total"},
			{Failed: "inference_objective_request_error_total", All: "inference_objective_request_total"},
		},
	}
}
