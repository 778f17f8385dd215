package slo

import (
	"strings"
	"testing"

	"github.com/tokentop/tokentop/telemetry"
)

// TestTTFAObjective: --slo-ttfa makes a percentile objective on the time to
// the first answer token, judged by the same percentile machinery as TTFT
// (and followed by a ratio objective with --slo-target).
func TestTTFAObjective(t *testing.T) {
	if v, err := ParseThreshold(telemetry.TTFA, "1500ms"); err != nil || v != 1.5 {
		t.Fatalf("ParseThreshold(ttfa, 1500ms) = %v, %v; want 1.5 s", v, err)
	}
	f, err := parseFlags(t, "--slo-ttfa", "2s", "--slo-tpot", "0", "--slo-availability", "0", "--slo-for", "20s",
		"--slo-window", "10s", "--slo-keep-firing-for", "0s", "--slo-target", "99%")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Changed() {
		t.Error("Changed() false after --slo-ttfa")
	}
	objs, err := f.Objectives()
	if err != nil {
		t.Fatal(err)
	}
	got := summary(objs)
	for _, want := range []string{"ttfa-p95=TTFA p95 ≤ 2s over 10s for 20s", "ttfa-ratio-99=99% of requests with TTFA ≤ 2s"} {
		if !strings.Contains(got, want) {
			t.Errorf("objectives %s lack %q", got, want)
		}
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

	f, err = parseFlags(t, "--slo-ttfa", "0")
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := f.Objectives(); err != nil || strings.Contains(summary(objs), "ttfa") {
		t.Errorf("--slo-ttfa 0 left %s (%v)", summary(objs), err)
	}
}
