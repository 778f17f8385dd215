package engines

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// The diagnosis signals are plain rows of the generic alias types, so a
// reader of the table (scrape, PromQL) needs nothing signal-specific:
// distributions are histograms (or a counter-ratio mean), rates are
// counters, Offset only shifts a counter ratio, and every signal has at
// least one engine.
func TestEngineSignalRows(t *testing.T) {
	covered := map[telemetry.Signal]bool{}
	for _, s := range All() {
		if s.LoRA.Info != "" { // the adapter counts come from its info gauge's labels (Spec.LoRA)
			covered[telemetry.LoRARunning], covered[telemetry.LoRAWaiting] = true, true
		}
		for _, sig := range telemetry.DiagnosisSignals() {
			for _, a := range s.Signals[sig] {
				covered[sig] = true
				dist := sig.Info().Distribution
				switch {
				case dist && a.Type != Histogram && a.Type != CounterRatio:
					t.Errorf("%s %s: distribution read as %s", s.Engine, sig, a.Type)
				case !dist && a.Type == Histogram:
					t.Errorf("%s %s: a value signal read as a histogram", s.Engine, sig)
				case a.Offset != 0 && a.Type != CounterRatio:
					t.Errorf("%s %s: Offset on a %s", s.Engine, sig, a.Type)
				case a.TwoCounters() && a.Per == "":
					t.Errorf("%s %s: ratio without a denominator", s.Engine, sig)
				case a.Type == CounterShare && (sig.Info().Distribution || a.Scale != 0):
					t.Errorf("%s %s: a share (0–1) read as a distribution or scaled", s.Engine, sig)
				}
			}
		}
	}
	for _, sig := range telemetry.DiagnosisSignals() {
		if !covered[sig] {
			t.Errorf("%s: no engine carries it", sig)
		}
	}
}
