package slo

import (
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

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
