package telemetry

// Signals of disaggregated serving (a prefill pool handing KV caches to a
// decode pool over NIXL, Mooncake or the like) and of the waiting reasons
// it brings. Engine-reported like EngineSignals, listed apart because the
// demo serves no disaggregated model yet.
const (
	KVTransferTime      Signal = "kv_transfer_ms"
	KVTransferBytes     Signal = "kv_transfer_bytes_per_s"
	KVTransferFailures  Signal = "kv_transfer_failures_per_s"
	KVTransferPromptTPS Signal = "kv_transfer_prompt_tokens_per_s"
	WaitingDeferred     Signal = "waiting_deferred"
)

// LoRA adapter signals: how many of the engine's adapter slots are in use
// and how many adapters wait for one.
const (
	LoRARunning Signal = "lora_adapters_running"
	LoRAWaiting Signal = "lora_adapters_waiting"
)

// DisaggSignals lists them in display order, the LoRA ones, then the
// router's (RouterSignals) last; each call returns a fresh slice, so no
// caller can change another's list.
func DisaggSignals() []Signal {
	return append([]Signal{KVTransferTime, KVTransferBytes, KVTransferFailures, KVTransferPromptTPS, WaitingDeferred,
		LoRARunning, LoRAWaiting}, RouterSignals()...)
}

// DiagnosisSignals returns the engine diagnosis signals followed by the
// disaggregation ones: every engine-reported figure a view lists below
// the request-level ones.
func DiagnosisSignals() []Signal {
	return append(append([]Signal(nil), EngineSignals...), DisaggSignals()...)
}

var disaggSignalInfo = map[Signal]SignalInfo{
	KVTransferTime: {Unit: "ms", Scale: 1000, Distribution: true, Title: "KV xfer",
		Definition: "server: time of one KV-cache transfer between a prefill and a decode worker (per transfer; a part of TTFT under P/D)"},
	KVTransferBytes: {Unit: "GB/s", Scale: 1e-9, CounterRate: true, Title: "KV xfer BW",
		Definition: "server: KV-cache bytes transferred between workers per second, Δbytes/Δt over the rate window"},
	KVTransferFailures: {Unit: "/s", Scale: 1, CounterRate: true, Title: "KV xfer fail",
		Definition: "server: failed KV-cache transfers per second (the request is recomputed or fails)"},
	KVTransferPromptTPS: {Unit: "tok/s", Scale: 1, CounterRate: true, Title: "KV-fed prompt",
		Definition: "server: prompt tokens a decode worker received by KV transfer instead of computing them, per second"},
	LoRARunning: {Unit: "", Scale: 1, Title: "LoRA running",
		Definition: "server: LoRA adapters with requests in the running batch (of the engine's max_lora slots), from its latest lora_requests_info"},
	LoRAWaiting: {Unit: "", Scale: 1, Title: "LoRA waiting",
		Definition: "server: LoRA adapters whose requests wait, from the engine's latest lora_requests_info; with every slot running, the adapter budget holds them"},
	WaitingDeferred: {Unit: "", Scale: 1, Title: "deferred",
		Definition: "server: requests held back by a transient constraint (a KV transfer in flight, the LoRA adapter budget), not by capacity; vLLM counts them in waiting, SGLang (its decode transfer queue) apart from it"},
}
