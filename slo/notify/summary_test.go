package notify

import (
	"testing"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// alertOf is an alert of objective o (completed as the engine completes
// it) with value v, in state st.
func alertOf(o slo.Objective, v float64, st slo.State) slo.Alert {
	o = o.WithDefaults()
	a := slo.Alert{Objective: o.Name, Endpoint: "llama-prod", Kind: o.Kind, Signal: o.Signal, State: st,
		Value: v, Threshold: o.Threshold, Description: o.String(), Severity: o.Severity}
	if o.Kind == slo.Ratio {
		a.Threshold = o.BurnWindows[0].Factor
	}
	return a
}

// The text sent to Alertmanager, webhooks and hooks reads as what happened
// — a breach, "value > threshold", with the figures rounded as the
// dashboard rounds them — for every kind of objective, and a resolved
// alert reads as back within.
func TestSummaryReadsAsBreach(t *testing.T) {
	ttft := slo.Objective{Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5}
	errRate := slo.Objective{Kind: slo.ErrorRate, Threshold: 0.01}
	avail := slo.AvailabilityObjective()
	ratio := slo.Objective{Kind: slo.Ratio, Signal: telemetry.TTFT, Threshold: 5, Target: 0.99}
	resolvedWithin := alertOf(ttft, 3.14159, slo.Resolved)
	targetDown := alertOf(slo.TargetUpObjective(), 0, slo.Firing)
	targetDown.Description = "target up for 1m" // as the engine describes a replica's alert
	cases := []struct {
		name string
		a    slo.Alert
		want string
	}{
		{"percentile", alertOf(ttft, 7.254321, slo.Firing), "TTFT p95 7.25s > 5s over 5m on llama-prod (warning)"},
		{"percentile resolved", resolvedWithin, "resolved: TTFT p95 3.14s ≤ 5s over 5m on llama-prod (warning)"},
		{"error rate", alertOf(errRate, 0.0123456, slo.Firing), "error rate 1.2% > 1% over 5m on llama-prod (warning)"},
		{"availability", alertOf(avail, 9.0/17, slo.Firing), "probe failures 53% > 50% over 1m on llama-prod (page)"},
		{"availability resolved", alertOf(avail, 0.25, slo.Resolved), "resolved: probe failures 25% ≤ 50% over 1m on llama-prod (page)"},
		{"target down", targetDown, "target down (up 0%) against target up for 1m on llama-prod (page)"},
		{"ratio", alertOf(ratio, 15.123456, slo.Firing),
			"burn rate 15.1× > 14.4× against 99% of requests with TTFT ≤ 5s over 28d on llama-prod (warning)"},
	}
	for _, tc := range cases {
		if got := Summary(tc.a); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	resolvedWithin.Reason = "endpoint retired"
	if got, want := Summary(resolvedWithin), "resolved: TTFT p95 3.14s ≤ 5s over 5m on llama-prod (warning): endpoint retired"; got != want {
		t.Errorf("resolved with a reason:\n got %q\nwant %q", got, want)
	}
}
