package detail

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/telemetry"
)

// The exploratory test's endpoint: 184 queue times all in vLLM's lowest
// bucket (le="0.3", mean 3.9 ms). The detail view says what is known, ≤
// 300 ms and the mean, never histogram_quantile's 150/285/297 ms; a
// quantile beyond the highest finite bound reads ≥.
func TestEngineSectionMarksBucketBounds(t *testing.T) {
	in := baseInput()
	in.h = 80
	up := telemetry.BoundUpper
	in.ep.Signals[telemetry.QueueTime] = scrapedLive(telemetry.SignalSnapshot{Unit: "ms", P50: f(300), P90: f(300), P95: f(300), P99: f(300),
		P50Bound: up, P90Bound: up, P95Bound: up, P99Bound: up, Mean: f(0.714 / 184 * 1000), Count: 184})
	in.ep.Signals[telemetry.PrefillTime] = scrapedLive(telemetry.SignalSnapshot{Unit: "ms", P50: f(420), P90: f(900), P95: f(1000), P99: f(1000),
		P95Bound: telemetry.BoundLower, P99Bound: telemetry.BoundLower, Mean: f(510), Count: 50})
	m := New(ctxFor("default", t0))
	out := ansi.Strip(show(&m, in))
	for _, want := range []string{
		"queue        p50–p99 ≤300ms mean 3.88ms n=184",
		"prefill      p50 420ms p95–p99 ≥1s mean 510ms n=50",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, absent := range []string{"150ms", "285ms", "p50 300ms"} {
		if strings.Contains(out, absent) {
			t.Errorf("%q shown as a measurement:\n%s", absent, out)
		}
	}
}

// Goodput says what its count counts: "100% of 3 probes", so that the age
// after it does not read as part of the number ("100% of 3 8s ago").
func TestGoodputCountNamed(t *testing.T) {
	in := baseInput()
	in.ep.Signals[telemetry.Goodput] = telemetry.SignalSnapshot{Unit: "%", Value: f(100), Count: 3, State: telemetry.Live,
		ObservedAt: t0, Source: "probe:http://gpu-a:8000"}
	m := New(ctxFor("default", t0))
	if out := ansi.Strip(show(&m, in)); !strings.Contains(out, "100% of 3 probes") {
		t.Errorf("goodput line: want %q in\n%s", "100% of 3 probes", out)
	}
}
