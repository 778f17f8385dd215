package slo

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/telemetry"
)

func parseFlags(t *testing.T, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := BindFlags(fs)
	return f, fs.Parse(args)
}

func summary(objs []Objective) string {
	var out []string
	for _, o := range objs {
		s := o.Name + "=" + o.String()
		if o.For > 0 {
			s += " for " + FormatDuration(o.For)
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
		{nil, "ttft-p95=TTFT p95 ≤ 5s over 5m for 1m; tpot-p95=TPOT p95 ≤ 50ms over 5m for 1m; availability=probe failures ≤ 50% over 1m"},
		{[]string{"--slo-availability", "90%", "--slo-availability-window", "2m", "--slo-tpot", "0"},
			"ttft-p95=TTFT p95 ≤ 5s over 5m for 1m; availability=probe failures ≤ 10% over 2m"},
		{[]string{"--slo-availability", "0", "--slo-tpot", "0"}, "ttft-p95=TTFT p95 ≤ 5s over 5m for 1m"},
		{[]string{"--slo-ttft", "2s", "--slo-tpot", "0", "--slo-e2e", "30s", "--slo-error-rate", "1%",
			"--slo-percentile", "99", "--slo-window", "1m", "--slo-for", "0s"},
			"ttft-p99=TTFT p99 ≤ 2s over 1m; e2e-p99=E2E p99 ≤ 30s over 1m; error-rate=error rate ≤ 1% over 1m; availability=probe failures ≤ 50% over 1m"},
		{[]string{"--slo-target", "99.9%", "--slo-period", "7d", "--slo-tpot", "0"},
			"ttft-p95=TTFT p95 ≤ 5s over 5m for 1m; ttft-ratio-99.9=99.9% of requests with TTFT ≤ 5s over 7d; availability=probe failures ≤ 50% over 1m"},
	} {
		f, err := parseFlags(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := f.Objectives()
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := summary(objs); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
}

func TestFlagsOverrideConfigOnlyWhereGiven(t *testing.T) {
	base := []Objective{
		{Name: "fast", Kind: Percentile, Signal: telemetry.TTFT, Threshold: 1, Window: time.Minute, For: 5 * time.Second},
		{Name: "good", Kind: Ratio, Signal: telemetry.TTFT, Threshold: 1, Target: 0.99, Period: 24 * time.Hour,
			BurnWindows: []BurnWindow{{Factor: 10, Long: time.Hour, Short: 5 * time.Minute}}},
		{Name: "errs", Kind: ErrorRate, Threshold: 0.05},
	}
	f, err := parseFlags(t, "--slo-ttft", "3s", "--slo-error-rate", "2%", "--slo-period", "7d")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := f.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 4 || objs[3].Kind != Availability || objs[0].Threshold != 3 || objs[0].For != 5*time.Second || objs[0].Window != time.Minute {
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
	if f, _ := parseFlags(t); f.Changed() {
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
		if _, err := parseFlags(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	f, err := parseFlags(t, "--slo-scale", "4032")
	if err != nil || f.Options().Scale != 4032 {
		t.Errorf("scale: %v %v", err, f.Options())
	}
}

func TestParsers(t *testing.T) {
	durs := map[string]time.Duration{"28d": 28 * 24 * time.Hour, "1d12h": 36 * time.Hour, "2w": 14 * 24 * time.Hour,
		"500ms": 500 * time.Millisecond, "0": 0, "1.5d": 36 * time.Hour}
	for in, want := range durs {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "5x", "d", "1d2", "xd"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
	ratios := map[string]float64{"1%": 0.01, "0.01": 0.01, "99.9%": 0.999, "0": 0}
	for in, want := range ratios {
		if got, err := ParseRatio(in); err != nil || !near(got, want) {
			t.Errorf("ParseRatio(%q) = %v, %v", in, got, err)
		}
	}
	pcts := map[string]float64{"95": 0.95, "p99": 0.99, "99.9": 0.999, "0.95": 0.95, "50%": 0.5}
	for in, want := range pcts {
		if got, err := ParsePercentile(in); err != nil || !near(got, want) {
			t.Errorf("ParsePercentile(%q) = %v, %v", in, got, err)
		}
	}
	for sig, in := range map[telemetry.Signal]string{telemetry.TPOT: "50ms", telemetry.ErrorRate: "5%", telemetry.Running: "4"} {
		want := map[telemetry.Signal]float64{telemetry.TPOT: 0.05, telemetry.ErrorRate: 0.05, telemetry.Running: 4}[sig]
		if got, err := ParseThreshold(sig, in); err != nil || !near(got, want) {
			t.Errorf("ParseThreshold(%s, %q) = %v, %v", sig, in, got, err)
		}
	}
	fmts := map[time.Duration]string{28 * 24 * time.Hour: "28d", 5 * time.Minute: "5m", 90 * time.Minute: "1h30m",
		50 * time.Millisecond: "50ms", 1500 * time.Millisecond: "1.5s", 0: "0s"}
	for d, want := range fmts {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	if got := budgetOf(0.999); got != 0.001 {
		t.Errorf("budget of 99.9%% = %v, want exactly 0.001", got)
	}
}
