package engines

import (
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// Queue is the server-side queueing time signal (request waiting before
// scheduling), kept as an alias of telemetry.QueueTime.
const Queue = telemetry.QueueTime

// ErrorCounters says how an engine counts failed requests. The error rate
// is Δfailed / Δall over an interval; with Δall = 0 there is no data.
type ErrorCounters struct {
	// Failed is the counter of failed requests. With FailedLabel set only
	// series whose label is one of FailedValues count as failed.
	Failed       string
	FailedLabel  string
	FailedValues []string
	// All is the counter of all requests (summed over all its series).
	// When empty, all = failed + Succeeded.
	All       string
	Succeeded string
}

// Names returns the counters read.
func (e ErrorCounters) Names() []string {
	var out []string
	for _, n := range []string{e.Failed, e.All, e.Succeeded} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// ModelInfo says where a label-less engine names its model.
type ModelInfo struct {
	// Path is fetched with GET on the endpoint's base URL.
	Path string
	// Field is a dotted JSON path to the model id ("model_id",
	// "data.0.id").
	Field string
}

// KVInfo says how live KV-cache tokens are found (for the MBU estimate).
type KVInfo struct {
	// Config is an info gauge whose labels give the capacity: tokens =
	// BlocksLabel × BlockSizeLabel (vllm:cache_config_info).
	Config         string
	BlocksLabel    string
	BlockSizeLabel string
	// LiveTokens is a gauge of KV tokens in use, used instead of
	// usage × capacity when present (sglang:num_used_tokens).
	LiveTokens string
}

// LoRAInfo says where an engine lists its LoRA adapters in use: an info
// gauge written anew at each change, its value the time of the change, so
// the series with the largest value is the current one; its labels list
// the adapters with running and with waiting requests, comma-separated,
// and the number of adapter slots.
type LoRAInfo struct {
	Info, RunningLabel, WaitingLabel, MaxLabel string
}

// Adapters splits one of the info gauge's comma-separated adapter lists
// into its distinct, non-empty names.
func (LoRAInfo) Adapters(list string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Spec is everything ttftop knows about one engine's metrics.
type Spec struct {
	Engine telemetry.Engine
	// Title is the display name.
	Title string
	// ModelLabels name the model, tried in order on each series; empty
	// when the engine has no model label (TGI, llama.cpp).
	ModelLabels []string
	// ModelInfo is the HTTP fallback for engines without a model label.
	ModelInfo ModelInfo
	// Paths are the usual metrics paths, the first being the default.
	Paths []string
	// Prefixes identify the engine's metric names ("vllm:").
	Prefixes []string
	// Markers are unprefixed names that identify the engine (NIM vs
	// TensorRT-LLM share unprefixed vLLM-style names).
	Markers []string
	// Signals maps each signal to its aliases in preference order.
	Signals map[telemetry.Signal][]Alias
	// Errors counts failed requests, in preference order (the first whose
	// Failed counter is present wins); empty when the engine has none.
	Errors []ErrorCounters
	// KV locates KV capacity/live tokens; zero when unknown.
	KV KVInfo
	// LoRA locates the adapters in use; zero when the engine lists none.
	LoRA LoRAInfo
	// RoleLabel is the label by which a worker names its role in a
	// disaggregated model (telemetry.RolePrefill or RoleDecode; other
	// values, such as SGLang's "unified", name none); "" when the engine's
	// pages do not say.
	RoleLabel string
	// RankLabels name a series' data-parallel rank, tried in order; empty
	// when the engine labels none. A model whose series carry two ranks or
	// more is shown with its ranks under it (docs/disaggregated.md, "Data-
	// parallel ranks"); its own figures combine them by each Alias.Agg.
	RankLabels []string
}

// ModelLabel returns the preferred model label, or "" when there is none.
func (s Spec) ModelLabel() string {
	if len(s.ModelLabels) == 0 {
		return ""
	}
	return s.ModelLabels[0]
}

// SignalOrder returns the spec's signals in telemetry display order
// (telemetry.Signals, which includes the engine diagnosis signals).
func (s Spec) SignalOrder() []telemetry.Signal {
	var out []telemetry.Signal
	for _, sig := range telemetry.Signals {
		if _, ok := s.Signals[sig]; ok {
			out = append(out, sig)
		}
	}
	return out
}

// Names returns every family name the spec reads, aliases first.
func (s Spec) Names() []string {
	var out []string
	seen := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	for _, sig := range s.SignalOrder() {
		for _, a := range s.Signals[sig] {
			add(a.Names()...)
		}
	}
	for _, e := range s.Errors {
		add(e.Names()...)
	}
	add(s.KV.Config, s.KV.LiveTokens, s.LoRA.Info)
	return out
}

// CreatedName returns the name of the "_created" gauge family that the
// Python client writes next to a counter (name without "_total") or a
// histogram (base name) family.
func CreatedName(family string, counter bool) string {
	const total = "_total"
	if n := len(family); counter && n > len(total) && family[n-len(total):] == total {
		return family[:n-len(total)] + "_created"
	}
	return family + "_created"
}

// Resolve returns the first alias of sig whose families all exist
// according to has: first present wins, so newer names beat old ones.
func (s Spec) Resolve(sig telemetry.Signal, has func(name string) bool) (Alias, bool) {
	for _, a := range s.Signals[sig] {
		ok := true
		for _, n := range a.Names() {
			ok = ok && has(n)
		}
		if ok {
			return a, true
		}
	}
	return Alias{}, false
}
