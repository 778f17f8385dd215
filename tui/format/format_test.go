package format

import (
	"strings"
	"testing"
	"time"

	_ "github.com/charmbracelet/x/exp/golden" // registers -update for go test ./tui/... -update

	"github.com/ttftop/ttftop/telemetry"
)

func TestSignalStatesNeverLookLive(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 14, 0, time.UTC)
	v := 812.0
	base := telemetry.SignalSnapshot{Unit: "ms", Value: &v, ObservedAt: now.Add(-14 * time.Second)}
	cases := []struct {
		state telemetry.State
		ok    bool
		width int
		want  Cell
	}{
		{telemetry.Live, true, 10, Cell{"812ms", Live}},
		{telemetry.Stale, true, 20, Cell{"812ms 14s ago", Stale}},
		{telemetry.Stale, true, 10, Cell{"STALE 14s", Stale}},
		{telemetry.Stale, true, 6, Cell{"STALE", Stale}},
		{telemetry.Error, true, 10, Cell{"ERROR", Error}},
		{telemetry.NoData, true, 10, Cell{"no data", NoData}},
		{telemetry.Unknown, true, 10, Cell{"—", Unknown}},
		{telemetry.Live, false, 10, Cell{"—", Unknown}},
	}
	for _, c := range cases {
		s := base
		s.State = c.state
		if got := Signal(s, c.ok, Scalar(s), now, c.width, "—"); got != c.want {
			t.Errorf("%v ok=%v w=%d: %+v want %+v", c.state, c.ok, c.width, got, c.want)
		}
	}
	// Live but no figure: "no data", never "0".
	if got := Signal(telemetry.SignalSnapshot{State: telemetry.Live}, true, "", now, 10, "—"); got.Text != NoDataText {
		t.Errorf("live without value: %+v", got)
	}
	s := base
	s.State, s.Approx = telemetry.Live, true
	if got := Signal(s, true, Scalar(s), now, 10, "—"); got.Text != "~812ms" {
		t.Errorf("approx: %q", got.Text)
	}
}

func TestYoungAndCoverageMarks(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	v := 32.0
	s := telemetry.SignalSnapshot{Unit: "tok/s", Value: &v, State: telemetry.Live, Young: true, SeriesAgeS: 15, ObservedAt: now}
	c := Signal(s, true, Scalar(s), now, 40, "?")
	if !strings.HasSuffix(c.Text, YoungMark) {
		t.Errorf("young rate shown as %q, want the %q mark", c.Text, YoungMark)
	}
	if got := Young(s); got != "series 15s old: rate reads low" {
		t.Errorf("Young = %q", got)
	}
	s.Young = false
	if c := Signal(s, true, Scalar(s), now, 40, "?"); strings.HasSuffix(c.Text, YoungMark) {
		t.Errorf("a rate not young marked: %q", c.Text)
	}
	if got := Coverage(telemetry.SignalSnapshot{DataSince: now.Add(-8 * time.Minute)}, now); got != "8m of data" {
		t.Errorf("Coverage = %q, want 8m of data", got)
	}
	if got := Coverage(telemetry.SignalSnapshot{}, now); got != "" {
		t.Errorf("a full window has coverage %q", got)
	}
}

// A rate names its rate window by what sets it; a figure naming none (a
// gauge, a probe's window mean) says nothing.
func TestRateWindow(t *testing.T) {
	for _, c := range []struct {
		s    telemetry.SignalSnapshot
		want string
	}{
		{telemetry.SignalSnapshot{Source: "promql:http://prom:9090", RateWindowS: 300}, "over 5m, PromQL window"},
		{telemetry.SignalSnapshot{Source: "scrape:http://gpu:8000/metrics", RateWindowS: 1}, "over 1s, scrape window"},
		{telemetry.SignalSnapshot{Source: "scrape:http://gpu:8000/metrics", RateWindowS: 0.25}, "over 250ms, scrape window"},
		{telemetry.SignalSnapshot{Source: "scrape:http://gpu:8000/metrics", RateWindowS: 10.237}, "over 10s, scrape window"},
		{telemetry.SignalSnapshot{Source: "probe:http://gpu:8000"}, ""},
	} {
		if got := RateWindow(c.s); got != c.want {
			t.Errorf("RateWindow(%s, %vs) = %q, want %q", c.s.Source, c.s.RateWindowS, got, c.want)
		}
	}
}

// A quantile that is only a bucket edge says which side it bounds, in the
// table's pair and the detail's percentiles; the mean follows only where
// a bound is shown and the sum is known.
func TestQuantileBounds(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	up, low := telemetry.BoundUpper, telemetry.BoundLower
	queue := telemetry.SignalSnapshot{Unit: "ms", P50: f(300), P90: f(300), P95: f(300), P99: f(300),
		P50Bound: up, P90Bound: up, P95Bound: up, P99Bound: up, Mean: f(3.88)}
	mixed := telemetry.SignalSnapshot{Unit: "ms", P50: f(150), P90: f(300), P95: f(7680e3), P99: f(7680e3),
		P90Bound: up, P95Bound: low, P99Bound: low}
	plain := telemetry.SignalSnapshot{Unit: "ms", P50: f(12), P90: f(30), P95: f(41), P99: f(80), Mean: f(20)}
	cases := []struct {
		name, got, want string
	}{
		{"pair, all in the lowest bucket", Pair(queue), "≤300ms/≤300ms"},
		{"pair, +Inf", Pair(mixed), "150ms/≥2h08m"},
		{"pair, interpolated", Pair(plain), "12ms/80ms"},
		{"percentiles, one bound", Percentiles(queue, 50, 95, 99), "p50–p99 ≤300ms mean 3.88ms"},
		{"percentiles, mixed", Percentiles(mixed, 50, 90, 95, 99), "p50 150ms p90 ≤300ms p95–p99 ≥2h08m"},
		{"percentiles, no bound: no mean", Percentiles(plain, 50, 90, 99), "p50 12ms p90 30ms p99 80ms"},
		{"percentiles, unknown", Percentiles(telemetry.SignalSnapshot{Unit: "ms", P50: f(1)}, 50, 99), ""},
		{"quantile, lower", Quantile(5000, low, "ms"), "≥5s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}
