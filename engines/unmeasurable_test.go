package engines

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// What an engine can never give follows from the table alone: TGI has no
// TTFT histogram, llama.cpp neither TTFT nor a failed-request counter; a
// signal an engine derives (SGLang's TPOT from its ITL histogram) or has
// is never claimed, and nothing is claimed about an unknown engine.
func TestUnmeasurableFollowsTheTable(t *testing.T) {
	tgi := Unmeasurable(telemetry.EngineTGI)
	if got := tgi[telemetry.TTFT]; got != "TGI exposes no TTFT histogram" {
		t.Errorf("TGI TTFT: %q", got)
	}
	for _, sig := range []telemetry.Signal{telemetry.TPOT, telemetry.E2E, telemetry.ErrorRate} {
		if why, ok := tgi[sig]; ok {
			t.Errorf("TGI has %s, yet %q", sig, why)
		}
	}
	llama := Unmeasurable(telemetry.EngineLlamaCpp)
	if llama[telemetry.TTFT] != "llama.cpp exposes no TTFT histogram" || llama[telemetry.ErrorRate] != "llama.cpp exposes no failed-request counter" {
		t.Errorf("llama.cpp: %v", llama)
	}
	if _, ok := llama[telemetry.ITL]; ok {
		t.Errorf("llama.cpp gives a mean ITL: %v", llama)
	}
	if _, ok := Unmeasurable(telemetry.EngineSGLang)[telemetry.TPOT]; ok {
		t.Error("SGLang's TPOT is derived from its ITL histogram")
	}
	if got := Unmeasurable(telemetry.EngineVLLM); len(got) != 0 {
		t.Errorf("vLLM gives every signal of the table: %v", got)
	}
	if got := Unmeasurable(telemetry.EngineUnknown); got != nil {
		t.Errorf("unknown engine: %v", got)
	}
	// Every engine's claim is true of its own table.
	for _, s := range All() {
		for sig := range s.Unmeasurable() {
			if len(s.Signals[sig]) > 0 || sig == telemetry.ErrorRate && len(s.Errors) > 0 {
				t.Errorf("%s: claims %s unmeasurable but has it", s.Engine, sig)
			}
		}
	}
}
