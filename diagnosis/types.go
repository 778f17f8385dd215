package diagnosis

import "time"

// Cause is one word of the fixed vocabulary a diagnosis names; the string
// is the JSON "cause" value.
type Cause string

// The vocabulary (docs/diagnosis.md gives each rule).
const (
	Queueing    Cause = "queueing"     // requests wait: the queue's share of TTFT grew (saturation)
	Prefill     Cause = "prefill"      // prefill time or prompt length grew
	KVCache     Cause = "kv_cache"     // KV cache near full, preemptions
	Bandwidth   Cause = "bandwidth"    // decode at its memory-bandwidth roofline: capacity needed
	Batching    Cause = "batching"     // TPOT grew with the batch beyond the bytes it reads
	GPUSlowdown Cause = "gpu_slowdown" // TPOT grew at the same batch while MBU or DRAM activity fell
	Network     Cause = "network"      // the client − server TTFT gap grew
	PrefixCache Cause = "prefix_cache" // prefix-cache hit rate collapsed
	SpecDecode  Cause = "spec_decode"  // speculative acceptance collapsed
	Replica     Cause = "replica"      // one replica far from its siblings
	Errors      Cause = "errors"       // failures dominate
	Down        Cause = "down"         // the endpoint does not answer
	None        Cause = "none"         // healthy: no symptom
	Unclear     Cause = "unclear"      // a symptom, but the signals do not allow a call (Missing says why)
)

// Vocabulary lists every cause in the order a diagnosis ranks them: the
// first named is the leading one (root causes before their effects: a full
// KV cache makes requests queue).
var Vocabulary = []Cause{Down, Errors, Network, KVTransfer, KVCache, PrefixCache, SpecDecode, Replica,
	GPUSlowdown, Bandwidth, Batching, PDRatio, Prefill, Queueing, Unclear, None}

// Evidence is one figure a finding rests on and what it was compared
// with. Values are in the unit named (the snapshot's display units).
type Evidence struct {
	// Figure names the signal or derived figure ("queue_time_ms",
	// "ttft_gap_ms", "tpot_floor_ms").
	Figure string `json:"figure"`
	// Stat says which statistic of the window: "mean", "p50", "value".
	Stat  string  `json:"stat"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Baseline is what Value was compared with, and BaselineFrom where it
	// comes from: "own" (the endpoint's recent history), "siblings" (the
	// median of its sibling replicas), "ratio" (a documented fixed ratio,
	// such as KV use against full). Absent when the figure is context only.
	Baseline     *float64 `json:"baseline,omitempty"`
	BaselineFrom string   `json:"baseline_from,omitempty"`
	// Source is where the figure came from ("scrape:…", "probe:…").
	Source string `json:"source,omitempty"`
	// Approx marks an estimate (MBU from model size, not the engine's
	// own bytes counter).
	Approx bool `json:"approx,omitempty"`
	// Note is what a number cannot say: the failure's message.
	Note string `json:"note,omitempty"`
}

// Finding is one named cause with its evidence.
type Finding struct {
	Cause Cause `json:"cause"`
	// Summary is the cause in a few words, for a table row or alert line.
	Summary  string     `json:"summary"`
	Evidence []Evidence `json:"evidence,omitempty"`
	// Since is when this cause was first named in its current run of
	// refreshes.
	Since time.Time `json:"since,omitzero"`
	// Next is the one-line next step.
	Next string `json:"next,omitempty"`
	// Missing (Unclear) says which figures would have allowed a call.
	Missing []string `json:"missing,omitempty"`
}

// Diagnosis is one endpoint's read-out at one refresh.
type Diagnosis struct {
	Endpoint string    `json:"-"`
	At       time.Time `json:"at"`
	// Causes has at least one finding: None when healthy, Unclear when
	// the signals do not allow a call, else the named causes, leading
	// one first.
	Causes        []Finding     `json:"causes"`
	Decomposition Decomposition `json:"decomposition"`
}

// Leading is the first finding's cause.
func (d Diagnosis) Leading() Cause {
	if len(d.Causes) == 0 {
		return None
	}
	return d.Causes[0].Cause
}

// Decomposition splits the current latency into its physical terms; every
// field is nil when unknown (missing is never zero). Milliseconds.
type Decomposition struct {
	// ClientTTFTMs is the probes' p50 TTFT; ServerTTFTMs the engine's
	// (mean where the histogram has a sum, else p50: ServerStat says).
	ClientTTFTMs *float64 `json:"client_ttft_ms,omitempty"`
	ServerTTFTMs *float64 `json:"server_ttft_ms,omitempty"`
	ServerStat   string   `json:"server_stat,omitempty"`
	// NetworkMs is client p50 − server p50 TTFT: network, TLS, gateway and
	// anything else between the probe and the engine.
	NetworkMs *float64 `json:"network_ms,omitempty"`
	// QueueMs and PrefillMs are the engine's per-request means (p50 where
	// no sum is known).
	QueueMs   *float64 `json:"queue_ms,omitempty"`
	PrefillMs *float64 `json:"prefill_ms,omitempty"`
	// TPOTMs is the decode step time (the engine's ITL mean, else its
	// TPOT, else the probes' TPOT p50); TPOTFloorMs the bytes one step
	// reads ÷ peak bandwidth = MBU × step time; FloorFrom says whether the
	// MBU was "measured" (engine bytes counter) or "estimated" (model size
	// and live KV).
	TPOTMs      *float64 `json:"tpot_ms,omitempty"`
	TPOTFloorMs *float64 `json:"tpot_floor_ms,omitempty"`
	MBUPct      *float64 `json:"mbu_pct,omitempty"`
	FloorFrom   string   `json:"floor_from,omitempty"`
	Running     *float64 `json:"running,omitempty"`
}
