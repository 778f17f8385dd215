package engines

import "github.com/ttftop/ttftop/telemetry"

// Derivation is a signal computed from another signal's histogram where an
// engine exposes no metric of its own for it. Readers apply it per
// endpoint, and only where none of the engine's aliases of Signal is
// present; the value is marked derived (approximate) wherever it is shown.
type Derivation struct {
	// Signal is what is derived (TPOT).
	Signal telemetry.Signal
	// From is the signal whose Histogram aliases feed it (ITL): the
	// derivation is their mean, Δsum / Δcount.
	From telemetry.Signal
	// Tag is a short machine name for the derivation ("itl_mean").
	Tag string
	// Unless are signals whose presence on an endpoint rules the
	// derivation out where From is PerStep: under speculative decoding
	// such a histogram counts one observation per output event (several
	// tokens), so its mean is not a time per token.
	Unless []telemetry.Signal
	// Note says what the derived figure is, for display.
	Note string
}

// Derivations returns every derivation, in the order readers try them.
//
// TPOT from the ITL mean: vLLM V0 (≤0.7), NIM, SGLang, LMDeploy and the
// Dynamo frontend expose a per-token (ITL or "time per output token")
// histogram but no per-request TPOT histogram (TensorRT-LLM's
// time_per_output_token is per request: its own TPOT). The mean of a per-token histogram is
// the token-weighted mean time per output token; a per-request TPOT
// histogram weights every request once, so the two agree when requests
// are of similar length and differ otherwise.
//
// Never under speculative decoding (vLLM #52853): vLLM's ITL histogram
// then takes one observation per engine step, which emits 1 + accepted
// tokens, so its mean is a step time, not a time per token; where an
// endpoint exposes spec-decode counters its TPOT is the engine's
// request_time_per_output_token_seconds or missing.
func Derivations() []Derivation {
	return []Derivation{{
		Signal: telemetry.TPOT, From: telemetry.ITL, Tag: "itl_mean",
		Unless: []telemetry.Signal{telemetry.SpecAccept, telemetry.SpecAcceptLen},
		Note:   "derived: mean of the per-token (ITL) histogram, token-weighted; the engine has no per-request TPOT histogram",
	}}
}

// Of returns the aliases of d.From in s that a derivation can use
// (histograms only), in preference order.
func (d Derivation) Of(s Spec) []Alias {
	var out []Alias
	for _, a := range s.Signals[d.From] {
		if a.Type == Histogram {
			out = append(out, a)
		}
	}
	return out
}

// SeriesNames returns the names of the series a store holds for the
// alias: a histogram's _bucket, _sum and _count, a HistogramSum's _sum and
// _count, otherwise the family names.
func (a Alias) SeriesNames() []string {
	switch a.Type {
	case Histogram:
		return []string{a.Bucket(), a.Sum(), a.Count()}
	case HistogramSum:
		return []string{a.Sum(), a.Count()}
	}
	return a.Names()
}

// Excluded returns the aliases in s whose presence on an endpoint rules d
// out: its own signal's (the engine measures it), and those of d.Unless
// where a histogram it derives from is PerStep (SGLang's per-token ITL
// stays per token under speculative decoding).
func (d Derivation) Excluded(s Spec) []Alias {
	out := append([]Alias(nil), s.Signals[d.Signal]...)
	perStep := false
	for _, a := range d.Of(s) {
		perStep = perStep || a.PerStep
	}
	if !perStep {
		return out
	}
	for _, sig := range d.Unless {
		out = append(out, s.Signals[sig]...)
	}
	return out
}
