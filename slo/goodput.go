package slo

import (
	"slices"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// goodputSignals are the per-request latencies a goodput bound can judge,
// in display order.
var goodputSignals = []telemetry.Signal{telemetry.TTFT, telemetry.TTFA, telemetry.TPOT, telemetry.E2E}

// Bounds are per-request latency bounds in seconds, by signal: a request is
// good when it meets every one (vLLM bench's --goodput, DistServe).
type Bounds map[telemetry.Signal]float64

// BoundsFor returns the latency bounds the objectives set on endpoint: the
// threshold of every percentile and ratio objective on TTFT, TTFA, TPOT or
// E2E that applies to it, the strictest where several do.
func BoundsFor(objs []Objective, endpoint string) Bounds {
	b := Bounds{}
	for _, o := range objs {
		if (o.Kind != Percentile && o.Kind != Ratio) || !slices.Contains(goodputSignals, o.Signal) ||
			!o.Matches(endpoint) || !(o.Threshold > 0) {
			continue
		}
		if v, ok := b[o.Signal]; !ok || o.Threshold < v {
			b[o.Signal] = o.Threshold
		}
	}
	return b
}

// String names the bounds, e.g. "TTFT ≤ 5s, TPOT ≤ 50ms".
func (b Bounds) String() string {
	var parts []string
	for _, sig := range goodputSignals {
		if v, ok := b[sig]; ok {
			parts = append(parts, sig.Info().Title+" ≤ "+FormatValue(sig, v))
		}
	}
	return strings.Join(parts, ", ")
}

// Good reports whether a request met every bound. A failed request is not
// good; a TPOT that is undefined (one output token) meets its bound (there
// was no decode to be slow), a missing TTFA does not (no answer came).
func (b Bounds) Good(r *telemetry.ProbeRecord) bool {
	if !r.OK {
		return false
	}
	for sig, limit := range b {
		var v float64
		switch sig {
		case telemetry.TTFT:
			v = r.TTFTms
		case telemetry.TTFA:
			if r.TTFAms <= 0 {
				return false
			}
			v = r.TTFAms
		case telemetry.TPOT:
			v = r.TPOTms
		case telemetry.E2E:
			v = r.E2Ems
		default:
			continue
		}
		if v/1000 > limit {
			return false
		}
	}
	return true
}
