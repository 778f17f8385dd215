package slo

import (
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// TestTTFAObjective: a percentile objective on the time to the first answer
// token is judged by the same percentile machinery as TTFT.
func TestTTFAObjective(t *testing.T) {
	if v, err := ParseThreshold(telemetry.TTFA, "1500ms"); err != nil || v != 1.5 {
		t.Fatalf("ParseThreshold(ttfa, 1500ms) = %v, %v; want 1.5 s", v, err)
	}
	// The objective --slo-ttfa 2s --slo-for 20s --slo-keep-firing-for 0s
	// makes (cmd/ttftop's TestTTFAObjectiveFlags checks the flags).
	objs := []Objective{Objective{Kind: Percentile, Signal: telemetry.TTFA, Threshold: 2, For: 20 * time.Second}.WithDefaults()}
	if objs[0].Name != "ttfa-p95" {
		t.Fatalf("name %q, want ttfa-p95", objs[0].Name)
	}
	var pct []Objective
	for _, o := range objs {
		if o.Kind == Percentile && o.Signal == telemetry.TTFA {
			o.Window = stepEvery
			pct = append(pct, o)
		}
	}
	h := newHarness(t, pct, Options{})
	states, _ := h.play(telemetry.TTFA, "ttfa-p95", "1 1 3x4 1 1")
	if want := "I I P P F F F R R"; states != want {
		t.Errorf("states %q, want %q", states, want)
	}
	if a := h.eng.History(); len(a) != 1 || a[0].Peak != 3 || a[0].Threshold != 2 {
		t.Errorf("history %+v", a)
	}
}
