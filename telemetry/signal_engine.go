package telemetry

// Engine diagnosis signals: what the serving engine reports about why the
// request-level figures are what they are (scrape and PromQL only; probes
// do not measure them). Each key names the unit its JSON figures are in
// (JSONUnit): _ms quantiles, _per_s rates, _ratio fractions 0–1,
// spec_accept_length in tokens per step.
const (
	QueueTime       Signal = "queue_time_ms"
	PrefillTime     Signal = "prefill_time_ms"
	DecodeTime      Signal = "decode_time_ms"
	RequestRate     Signal = "requests_per_s"
	PromptTPS       Signal = "prompt_tokens_per_s"
	Preemptions     Signal = "preemptions_per_s"
	PrefixCacheHit  Signal = "prefix_cache_hit_ratio"
	SpecAccept      Signal = "spec_accept_ratio"
	SpecAcceptLen   Signal = "spec_accept_length"
	EngineReadBytes Signal = "engine_read_bytes_per_s"
)

// EngineSignals lists the diagnosis signals in display order.
var EngineSignals = []Signal{QueueTime, PrefillTime, DecodeTime, RequestRate, PromptTPS, Preemptions,
	PrefixCacheHit, SpecAccept, SpecAcceptLen, EngineReadBytes}

var engineSignalInfo = map[Signal]SignalInfo{
	QueueTime: {Unit: "ms", Scale: 1000, Distribution: true, Title: "queue",
		Definition: "server: time a request waited in the engine queue before it was first scheduled (per request)"},
	PrefillTime: {Unit: "ms", Scale: 1000, Distribution: true, Title: "prefill",
		Definition: "server: time from first scheduling to the first output token (prompt processing; per request)"},
	DecodeTime: {Unit: "ms", Scale: 1000, Distribution: true, Title: "decode",
		Definition: "server: time from the first to the last output token (per request)"},
	RequestRate: {Unit: "req/s", Scale: 1, CounterRate: true, Title: "requests",
		Definition: "server: finished requests per second (all finish reasons unless the source says otherwise), Δcount/Δt over the rate window"},
	PromptTPS: {Unit: "tok/s", Scale: 1, CounterRate: true, Title: "prompt tok/s",
		Definition: "server: prompt (prefill) tokens processed per second, Δcount/Δt over the rate window"},
	Preemptions: {Unit: "/s", Scale: 1, CounterRate: true, Title: "preemptions",
		Definition: "server: requests preempted per second (evicted from the batch when the KV cache ran out; recomputed later)"},
	PrefixCacheHit: {Unit: "%", Scale: 100, Title: "prefix hit",
		Definition: "server: prompt tokens found in the prefix cache / prompt tokens looked up, over the rate window (token-based)"},
	SpecAccept: {Unit: "%", Scale: 100, Title: "spec accept",
		Definition: "server: speculative decoding acceptance rate, accepted draft tokens / proposed draft tokens, over the rate window"},
	SpecAcceptLen: {Unit: "tok/step", Scale: 1, Title: "accept len",
		Definition: "server: mean acceptance length, tokens emitted per verification step = 1 + accepted tokens / drafts"},
	EngineReadBytes: {Unit: "GB/s", Scale: 1e-9, CounterRate: true, Title: "read BW",
		Definition: "server: bytes the engine counts as read from GPU memory per second, per GPU (vLLM --enable-mfu-metrics: analytic per-step counts)"},
}

// IsEngineSignal reports whether sig is one of EngineSignals or
// DisaggSignals.
func IsEngineSignal(sig Signal) bool {
	_, ok := engineSignalInfo[sig]
	_, disagg := disaggSignalInfo[sig]
	_, router := routerSignalInfo[sig]
	return ok || disagg || router
}
