package engines

import (
	"fmt"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// TPOT is derived where an engine has a per-token histogram; llama.cpp's
// per-token figure is a counter ratio, Triton has none.
func TestDerivations(t *testing.T) {
	d := Derivations()[0]
	if d.Signal != telemetry.TPOT || d.From != telemetry.ITL || d.Tag == "" || d.Note == "" {
		t.Fatalf("derivation %+v", d)
	}
	for e, want := range map[telemetry.Engine]string{
		telemetry.EngineVLLM:     "[vllm:inter_token_latency_seconds vllm:time_per_output_token_seconds]",
		telemetry.EngineNIM:      "[time_per_output_token_seconds]",
		telemetry.EngineLlamaCpp: "[]",
		telemetry.EngineTriton:   "[]",
	} {
		s, _ := Lookup(e)
		var names []string
		for _, a := range d.Of(s) {
			names = append(names, a.Name)
		}
		if got := fmt.Sprint(names); got != want && !(want == "[]" && len(names) == 0) {
			t.Errorf("%s: %s, want %s", e, got, want)
		}
	}
	for a, want := range map[*Alias]string{
		{Name: "h", Type: Histogram}:              "[h_bucket h_sum h_count]",
		{Name: "g", Type: HistogramSum}:           "[g_sum g_count]",
		{Name: "c_total", Type: Counter}:          "[c_total]",
		{Name: "n", Type: CounterRatio, Per: "d"}: "[n d]",
		{Name: "h", Type: CounterShare, Per: "m"}: "[h m]",
	} {
		if got := fmt.Sprint(a.SeriesNames()); got != want {
			t.Errorf("%s: %s, want %s", a.Name, got, want)
		}
	}
}
