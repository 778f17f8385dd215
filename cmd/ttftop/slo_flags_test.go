package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

func parseSLOFlags(t *testing.T, args ...string) (*sloFlags, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := bindSLOFlags(fs)
	return f, fs.Parse(args)
}

func sloSummary(objs []slo.Objective) string {
	var out []string
	for _, o := range objs {
		s := o.Name + "=" + o.String()
		if o.For > 0 {
			s += " for " + slo.FormatDuration(o.For)
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func TestFlagObjectives(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "ttft-p95=TTFT p95 ≤ 5s over 5m for 1m; tpot-p95=TPOT p95 ≤ 50ms over 5m for 1m; availability=probe failures ≤ 50% over 1m; target-up=target up (a model row: every replica) for 1m"},
		{[]string{"--slo-availability", "90%", "--slo-availability-window", "2m", "--slo-tpot", "0"},
			"ttft-p95=TTFT p95 ≤ 5s over 5m for 1m; availability=probe failures ≤ 10% over 2m; target-up=target up (a model row: every replica) for 1m"},
		{[]string{"--slo-availability", "0", "--slo-tpot", "0"}, "ttft-p95=TTFT p95 ≤ 5s over 5m for 1m"},
		{[]string{"--slo-ttft", "2s", "--slo-tpot", "0", "--slo-e2e", "30s", "--slo-error-rate", "1%",
			"--slo-percentile", "99", "--slo-window", "1m", "--slo-for", "0s"},
			"ttft-p99=TTFT p99 ≤ 2s over 1m; e2e-p99=E2E p99 ≤ 30s over 1m; error-rate=error rate ≤ 1% over 1m; availability=probe failures ≤ 50% over 1m; target-up=target up (a model row: every replica)"},
		{[]string{"--slo-target", "99.9%", "--slo-period", "7d", "--slo-tpot", "0"},
			"ttft-p95=TTFT p95 ≤ 5s over 5m for 1m; ttft-ratio-99.9=99.9% of requests with TTFT ≤ 5s over 7d; availability=probe failures ≤ 50% over 1m; target-up=target up (a model row: every replica) for 1m"},
	} {
		f, err := parseSLOFlags(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := f.Objectives()
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := sloSummary(objs); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
}

func TestFlagsOverrideConfigOnlyWhereGiven(t *testing.T) {
	base := []slo.Objective{
		{Name: "fast", Kind: slo.Percentile, Signal: telemetry.TTFT, Threshold: 1, Window: time.Minute, For: 5 * time.Second},
		{Name: "good", Kind: slo.Ratio, Signal: telemetry.TTFT, Threshold: 1, Target: 0.99, Period: 24 * time.Hour,
			BurnWindows: []slo.BurnWindow{{Factor: 10, Long: time.Hour, Short: 5 * time.Minute}}},
		{Name: "errs", Kind: slo.ErrorRate, Threshold: 0.05},
	}
	f, err := parseSLOFlags(t, "--slo-ttft", "3s", "--slo-error-rate", "2%", "--slo-period", "7d")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := f.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 5 || objs[3].Kind != slo.Availability || objs[4].Kind != slo.TargetUp || objs[0].Threshold != 3 || objs[0].For != 5*time.Second || objs[0].Window != time.Minute {
		t.Errorf("percentile %+v", objs[0])
	}
	if objs[1].Threshold != 3 || objs[1].Period != 7*24*time.Hour || len(objs[1].BurnWindows) != 1 || objs[1].BurnWindows[0].Factor != 10 {
		t.Errorf("ratio %+v: follows the TTFT threshold and period, keeps its own windows", objs[1])
	}
	if objs[2].Name != "errs" || objs[2].Threshold != 0.02 || objs[2].Signal != telemetry.ErrorRate {
		t.Errorf("error rate %+v", objs[2])
	}
	if f.Changed() != true {
		t.Error("Changed false")
	}
	if f, _ := parseSLOFlags(t); f.Changed() {
		t.Error("Changed true without flags")
	}
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--slo-error-rate", "1"},   // ambiguous: 1 % or 100 %?
		{"--slo-percentile", "100"}, // p100 is the maximum, not a percentile
		{"--slo-ttft", "5"},         // no unit
		{"--slo-scale", "0.5"},      // scaling up is not a demo
		{"--slo-period", "-1d"},
	} {
		if _, err := parseSLOFlags(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	f, err := parseSLOFlags(t, "--slo-scale", "4032")
	if err != nil || f.Options().Scale != 4032 {
		t.Errorf("scale: %v %v", err, f.Options())
	}
}

// TestTTFAObjectiveFlags: --slo-ttfa makes a percentile objective on the
// time to the first answer token (followed by a ratio objective with
// --slo-target); slo's TestTTFAObjective judges it.
func TestTTFAObjectiveFlags(t *testing.T) {
	f, err := parseSLOFlags(t, "--slo-ttfa", "2s", "--slo-tpot", "0", "--slo-availability", "0", "--slo-for", "20s",
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
	got := sloSummary(objs)
	for _, want := range []string{"ttfa-p95=TTFA p95 ≤ 2s over 10s for 20s", "ttfa-ratio-99=99% of requests with TTFA ≤ 2s"} {
		if !strings.Contains(got, want) {
			t.Errorf("objectives %s lack %q", got, want)
		}
	}
	for _, o := range objs {
		if o.Kind == slo.Percentile && o.Signal == telemetry.TTFA && (o.Threshold != 2 || o.KeepFiringFor != 0) {
			t.Errorf("TTFA objective %+v, want threshold 2 s, no keep-firing", o)
		}
	}

	f, err = parseSLOFlags(t, "--slo-ttfa", "0")
	if err != nil {
		t.Fatal(err)
	}
	if objs, err := f.Objectives(); err != nil || strings.Contains(sloSummary(objs), "ttfa") {
		t.Errorf("--slo-ttfa 0 left %s (%v)", sloSummary(objs), err)
	}
}

// --slo-for and --slo-keep-firing-for, when given, apply to the default
// availability objective as to the others (its help says "a firing alert");
// without them it has neither.
func TestTimingFlagsApplyToAvailability(t *testing.T) {
	avail := func(args ...string) slo.Objective {
		t.Helper()
		f, err := parseSLOFlags(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := f.Objectives()
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.Kind == slo.Availability {
				return o
			}
		}
		t.Fatalf("%v: no availability objective", args)
		return slo.Objective{}
	}
	if o := avail(); o.For != 0 || o.KeepFiringFor != 0 {
		t.Errorf("default availability: for %v, keep firing %v; want neither", o.For, o.KeepFiringFor)
	}
	if o := avail("--slo-for", "20s", "--slo-keep-firing-for", "2m"); o.For != 20*time.Second || o.KeepFiringFor != 2*time.Minute {
		t.Errorf("availability with --slo-for 20s --slo-keep-firing-for 2m: for %v, keep firing %v", o.For, o.KeepFiringFor)
	}
}
