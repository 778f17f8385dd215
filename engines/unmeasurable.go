package engines

import (
	"slices"

	"github.com/ttftop/ttftop/telemetry"
)

// Unmeasurable returns the signals that engine's metrics can never give,
// with why ("TGI exposes no TTFT histogram"): signals some engine of the
// table carries but this one has no alias of, nor a derivation from one it
// has, and the error rate when it counts no failed requests. An objective
// on such a signal can never be judged from the engine's side, however
// long one waits. Nil for an engine the table does not know: nothing is
// claimed about it.
func Unmeasurable(engine telemetry.Engine) map[telemetry.Signal]string {
	spec, ok := Lookup(engine)
	if !ok {
		return nil
	}
	return spec.Unmeasurable()
}

// Unmeasurable is Unmeasurable of the spec's engine (see there).
func (s Spec) Unmeasurable() map[telemetry.Signal]string {
	out := map[telemetry.Signal]string{}
	for _, sig := range tableSignals() {
		// A router's count of its own objectives' misses is no engine's
		// figure to miss.
		if !s.gives(sig) && !slices.Contains(telemetry.RouterSignals(), sig) {
			out[sig] = s.Title + " exposes no " + sig.Info().Title + " " + metricWord(sig)
		}
	}
	if len(s.Errors) == 0 {
		out[telemetry.ErrorRate] = s.Title + " exposes no failed-request counter"
	}
	return out
}

// gives reports whether the spec has an alias of sig, or of a signal sig
// is derived from.
func (s Spec) gives(sig telemetry.Signal) bool {
	if len(s.Signals[sig]) > 0 {
		return true
	}
	for _, d := range Derivations() {
		if d.Signal == sig && len(d.Of(s)) > 0 {
			return true
		}
	}
	return false
}

// tableSignals are the signals any engine of the table gives, in display
// order.
func tableSignals() []telemetry.Signal {
	given := map[telemetry.Signal]bool{}
	for _, s := range All() {
		for sig := range s.Signals {
			given[sig] = true
		}
	}
	var out []telemetry.Signal
	for _, sig := range telemetry.Signals {
		if given[sig] {
			out = append(out, sig)
		}
	}
	return out
}

// metricWord names the kind of metric that would carry sig: a latency
// (a distribution) comes as a histogram.
func metricWord(sig telemetry.Signal) string {
	if sig.Info().Distribution {
		return "histogram"
	}
	return "metric"
}
