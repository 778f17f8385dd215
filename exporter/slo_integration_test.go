//go:build integration

package exporter

import (
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
)

// TestPrometheusSeesSLOSeries wires what `ttftop exporter` wires (a
// monitor probing the simulator, its SLO engine read by the exporter) and
// checks, in what a real Prometheus stored, that a healthy endpoint has
// every objective inactive and the ratio objective's burn rates at 0 over
// docs/exporter.md's windows.
func TestPrometheusSeesSLOSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus and a simulator (~10 s)")
	}
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	srv := startSim(t)

	// The ratio objective's threshold is far above any stall of a loaded
	// runner: its burn rate is checked to be exactly 0.
	healthy := ttftRatio()
	healthy.Threshold = 5
	m := monitor.New(monitor.Options{Objectives: append(slo.DefaultObjectives(), healthy), EvalEvery: 250 * time.Millisecond})
	if err := m.AddProbe(probe.Options{URL: srv.URL(), Model: "sim-3b", MaxTokens: 16, Interval: 250 * time.Millisecond}, ""); err != nil {
		t.Fatal(err)
	}
	e := New(Options{Alerts: m.SLO})
	m.AddSink(e)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	served, ran := make(chan error, 1), make(chan error, 1)
	go func() { served <- e.ServeListener(runCtx, ln) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	metricsURL := "http://" + ln.Addr().String() + "/metrics"
	prom := &promServer{promtest.Start(t, promtest.Target{Job: "ttftop", URL: metricsURL})}
	start := time.Now()
	go func() { ran <- m.Run(runCtx) }()

	// One alert per percentile objective, page and ticket for the ratio.
	wantAlerts := float64(len(slo.DefaultObjectives()) + 2)
	waitFor(t, ctx, "every objective inactive in Prometheus", func() bool {
		v, ok := prom.scalar(t, `count(ttftop_slo_alert_state{state="inactive"} == 1)`)
		return ok && v == wantAlerts
	})
	t.Logf("every objective inactive in Prometheus %s after start", time.Since(start).Round(100*time.Millisecond))

	alerts := m.SLO.Current()
	if len(alerts) != int(wantAlerts) {
		t.Fatalf("engine has %d alerts, want %g", len(alerts), wantAlerts)
	}
	endpoint := alerts[0].Endpoint
	for _, o := range m.SLO.Objectives() {
		q := `ttftop_slo_alert_state{objective="` + o.Name + `",state="inactive"} == 1`
		if res := prom.Query(t, q, time.Time{}); len(res) == 0 {
			t.Errorf("%s: empty", q)
		}
	}
	// One-hot: each alert's states sum to 1, over all six states.
	for q, want := range map[string]float64{
		`count(sum by (objective, endpoint, severity) (ttftop_slo_alert_state) == 1)`: wantAlerts,
		`count(ttftop_slo_alert_state)`:                                               wantAlerts * float64(len(alertStates())),
		`count(ttftop_slo_error_budget_span_seconds)`:                                 1,
	} {
		if v, ok := prom.scalar(t, q); !ok || v != want {
			t.Errorf("%s = %g (found %v), want %g", q, v, ok, want)
		}
	}
	burn := map[string]float64{}
	for _, s := range prom.Query(t, `ttftop_slo_burn_rate{objective="ttft-ratio-99"}`, time.Time{}) {
		burn[s.Metric["window"]] = s.Value
	}
	if got := slices.Sorted(maps.Keys(burn)); !slices.Equal(got, workbookWindows) {
		t.Errorf("burn-rate windows in Prometheus %v, want %v", got, workbookWindows)
	}
	for w, v := range burn {
		if v != 0 {
			t.Errorf("burn rate %s = %g on a healthy endpoint, want 0", w, v)
		}
	}
	if res := prom.Query(t, `ttftop_slo_error_budget_remaining_ratio`, time.Time{}); len(res) != 0 {
		t.Errorf("budget after seconds of a 28 d period: %v, want absent", res)
	}

	// Figures for the report: series per endpoint, and one scrape's size.
	for _, q := range []string{
		`count({job="ttftop",endpoint="` + endpoint + `"})`,
		`count({job="ttftop",endpoint="` + endpoint + `",__name__=~"ttftop_slo_.*"})`,
		`count({job="ttftop",__name__=~"go_.*|process_.*|promhttp_.*"})`,
	} {
		v, _ := prom.scalar(t, q)
		t.Logf("%s = %g", q, v)
	}
	for _, accept := range []string{"text/plain;version=0.0.4", "application/openmetrics-text;version=1.0.0"} {
		n, lines := scrapeSize(t, metricsURL, accept)
		t.Logf("scrape (%s): %d bytes, %d lines", accept, n, lines)
	}
}

// scrapeSize fetches url with the given Accept header and returns the
// body's size and line count.
func scrapeSize(t *testing.T, url, accept string) (int, int) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %v %d", url, err, resp.StatusCode)
	}
	return len(body), strings.Count(string(body), "\n")
}
