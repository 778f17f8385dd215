// Package telemetry is ttftop's domain model: endpoints, signals, values
// with their provenance and state, and the bounded windows that turn
// observations into quantiles and chart series. Sources produce
// Observations; views read Snapshots. It imports no source and no view.
package telemetry

// Signal names one measured quantity of an endpoint. The string is the key
// used in JSON output (`ttftop snapshot`), config and recordings.
type Signal string

const (
	TTFT         Signal = "ttft"
	TTFA         Signal = "ttfa"
	TPOT         Signal = "tpot"
	ITL          Signal = "itl"
	E2E          Signal = "e2e"
	OutputTPS    Signal = "output_tps"
	Running      Signal = "running"
	Waiting      Signal = "waiting"
	KVCache      Signal = "kv_cache"
	GPUMemBW     Signal = "gpu_mem_bw"
	MBU          Signal = "mbu"
	ErrorRate    Signal = "error_rate"
	ProbeSuccess Signal = "probe_success"
	// Goodput is judged per probe by the monitor against the endpoint's
	// latency objectives: 1 good, 0 not (failed probes are not good).
	Goodput Signal = "goodput"
)

// Signals lists every signal in display order: the request-level and
// capacity figures, then the engine diagnosis signals (DiagnosisSignals).
var Signals = append([]Signal{TTFT, TTFA, TPOT, ITL, E2E, OutputTPS, Running, Waiting, KVCache, GPUMemBW, MBU, GPUPower, EnergyPerToken, ErrorRate, ProbeSuccess, Goodput, TargetUp},
	DiagnosisSignals()...)

// SignalInfo says what a signal is, so every figure shown can name its
// definition.
type SignalInfo struct {
	// Unit is the display unit; Scale converts the stored base unit
	// (seconds, ratios 0–1) to it.
	Unit  string
	Scale float64
	// Distribution signals are summarised by quantiles, others by a value.
	Distribution bool
	// CounterRate marks a per-second rate of a counter (tok/s, req/s), or
	// a figure proportional to one (GPU power from the energy counter,
	// measured MBU from the bytes-read counter): taken over a series
	// younger than its rate window it reads low (Prometheus' rate()
	// divides by the whole window). Ratios, shares and means of two
	// counters do not: both counts are short alike. Only figures whose
	// observation carries a SeriesAge are marked.
	CounterRate bool
	Title       string
	Definition  string
}

// ReadsLowWhenYoung reports whether sig's figure, computed over a series
// younger than its rate window (Observation.SeriesAge), is lower than the
// true rate: the one rule for the young mark.
func ReadsLowWhenYoung(sig Signal) bool { return sig.Info().CounterRate }

// Info returns the description of s; unknown signals get their own name.
func (s Signal) Info() SignalInfo {
	if i, ok := signalInfo[s]; ok {
		return i
	}
	if i, ok := engineSignalInfo[s]; ok {
		return i
	}
	if i, ok := disaggSignalInfo[s]; ok {
		return i
	}
	if i, ok := routerSignalInfo[s]; ok {
		return i
	}
	return SignalInfo{Unit: "", Scale: 1, Title: string(s)}
}

var signalInfo = map[Signal]SignalInfo{
	TTFT: {Unit: "ms", Scale: 1000, Distribution: true, Title: "TTFT",
		Definition: "time to first token: first event carrying output text − request start (probes); server-side queue+prefill (scrapes)"},
	TTFA: {Unit: "ms", Scale: 1000, Distribution: true, Title: "TTFA",
		Definition: "time to first answer token: first event with answer text or a tool call − request start (= TTFT without reasoning)"},
	TPOT: {Unit: "ms", Scale: 1000, Distribution: true, Title: "TPOT",
		Definition: "time per output token: (E2E − TTFT) / (n − 1), n = output tokens, n > 1"},
	ITL: {Unit: "ms", Scale: 1000, Distribution: true, Title: "ITL",
		Definition: "inter-token latency: gap between consecutive token-bearing events (engine step time on scrapes)"},
	E2E: {Unit: "ms", Scale: 1000, Distribution: true, Title: "E2E",
		Definition: "end-to-end latency: last token-bearing event − request start"},
	OutputTPS: {Unit: "tok/s", Scale: 1, CounterRate: true, Title: "tok/s",
		Definition: "output tokens per second: decode rate (n − 1)/(E2E − TTFT) for probes; rate of generated tokens for scrapes"},
	Running: {Unit: "req", Scale: 1, Title: "running",
		Definition: "requests in the running batch; summed over a server's DP ranks and a model's replicas"},
	Waiting: {Unit: "req", Scale: 1, Title: "waiting",
		Definition: "requests waiting in the engine queue; summed over a server's DP ranks and a model's replicas"},
	KVCache: {Unit: "%", Scale: 100, Title: "KV",
		Definition: "KV-cache blocks in use / KV-cache blocks allocated; over a server's DP ranks or a model's replicas, the fullest one's (max, not mean: each has its own pool, and a full one queues and preempts however empty the others are)"},
	GPUMemBW: {Unit: "%", Scale: 100, Title: "DRAM",
		Definition: "measured GPU memory-bandwidth utilisation: DCGM DRAM-active ratio (or memory busy time when only MEM_COPY_UTIL exists)"},
	MBU: {Unit: "%", Scale: 100, CounterRate: true, Title: "MBU",
		Definition: "model bandwidth utilisation: the engine's own bytes-read counter / peak bandwidth per GPU where it has one (measured); else estimated, marked est. and ~: (weight bytes + live KV bytes) / decode step time / (peak bandwidth × GPUs)"},
	GPUPower: {Unit: "W", Scale: 1, CounterRate: true, Title: "power",
		Definition: "GPU power, summed over the endpoint's GPUs, each GPU once: DCGM energy counter increase ÷ scrape interval (scrapes) or rate over the PromQL window W (PromQL mode) where it exists, else DCGM_FI_DEV_POWER_USAGE or nvidia-smi power.draw; a host's whole draw, marked shared, where several endpoints use its GPUs"},
	EnergyPerToken: {Unit: "J/tok", Scale: 1, Title: "J/tok",
		Definition: "GPU energy per output token over the window: mean GPU power ÷ mean output tok/s (server counter; probes' tokens, approx, where only probes exist); GPUs shared by several endpoints (one host's): their energy ÷ all those endpoints' tokens"},
	ErrorRate: {Unit: "%", Scale: 100, Title: "err",
		Definition: "failed requests / all requests in the window"},
	ProbeSuccess: {Unit: "", Scale: 1, Title: "up",
		Definition: "1 when the last probe succeeded, 0 when it failed (the window's share of failed probes is err)"},
	TargetUp: {Unit: "%", Scale: 100, Title: "up",
		Definition: "100% (1) while the target's scrapes succeed, 0 while they fail: the store's up (PromQL mode) or ttftop's own scrape (direct scrape, once one has worked); a model row's is the share of its replicas up (replicas the store no longer knows left out)"},
	Goodput: {Unit: "%", Scale: 100, Title: "goodput",
		Definition: "probes in the window meeting every latency objective of the endpoint (TTFT, TTFA, TPOT, E2E thresholds) / all probes; failed probes are not good"},
}
