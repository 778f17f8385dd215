package exporter

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

func sourceObs(id string, at time.Time, every time.Duration, state telemetry.State, err string) telemetry.Observation {
	return telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: id, Interval: every, Err: err,
		Status: &telemetry.SourceStatus{Name: id, Kind: telemetry.SourceKindOf(id), State: state, Err: err}}
}

// An exporter with only a PromQL source (QA: `ttftop exporter
// --prometheus URL` answered 503 "no probe result" forever) is healthy
// while the store answers within its staleness, and says why when not.
func TestHealthzWithoutProbesFollowsSources(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	e := New(Options{Now: clk.Now, NoProbes: true})
	h := e.Handler()
	expect := func(code int, substr string) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		body, err := io.ReadAll(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Code != code || !strings.Contains(string(body), substr) {
			t.Errorf("healthz = %d %q, want %d containing %q", rec.Code, body, code, substr)
		}
	}
	const prom = "promql:http://127.0.0.1:9090"
	expect(200, "starting: no source report yet")
	clk.Add(31 * time.Second)
	expect(503, "no source report since start 31s ago")

	e.Observe(sourceObs(prom, clk.Now(), 15*time.Second, telemetry.Live, ""))
	expect(200, "ok: "+prom+" answered 0s ago (limit 45s = 3 × 15s refresh)")
	clk.Add(45 * time.Second)
	expect(200, "ok: "+prom)
	// A failed refresh is not an answer, but the last one is still
	// within the staleness.
	e.Observe(sourceObs(prom, clk.Now(), 15*time.Second, telemetry.Error, "connection refused"))
	expect(200, "ok: "+prom)
	clk.Add(time.Second)
	expect(503, "unhealthy: "+prom+": no answer for 46s (limit 45s = 3 × 15s refresh), last report error: connection refused")
	// A lagging store (stale) brings no figures of now either.
	e.Observe(sourceObs(prom, clk.Now(), 15*time.Second, telemetry.Stale, "newest sample 2m old"))
	expect(503, "last report stale")
	// The store answering with nothing is still an answer: restarting the
	// exporter would not bring series.
	e.Observe(sourceObs(prom, clk.Now(), 15*time.Second, telemetry.NoData, ""))
	expect(200, "ok: "+prom)

	// A second source answering is enough; notifiers are not sources.
	clk.Add(time.Minute)
	e.Observe(sourceObs("notify:webhook", clk.Now(), time.Second, telemetry.Live, ""))
	expect(503, "no answer for 1m0s")
	e.Observe(sourceObs("dcgm:http://127.0.0.1:9400/metrics", clk.Now(), time.Second, telemetry.Live, ""))
	expect(200, "ok: dcgm:http://127.0.0.1:9400/metrics answered 0s ago (limit 5s = 3 × 1s refresh (at least 5s))")
}

// Review: the limit's text named the source's own interval, not the one
// the limit was made of: "limit 30s = 3 × 0s refresh" for a source that
// named none, "limit 5s = 3 × 1s refresh" under the 5 s floor.
func TestHealthzSaysTheIntervalTheLimitIsMadeOf(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	e := New(Options{Now: clk.Now, NoProbes: true})
	const smi = "nvidia-smi:local"
	e.Observe(sourceObs(smi, clk.Now(), 0, telemetry.Live, ""))
	want := fmt.Sprintf("%s answered 0s ago (limit %s = 3 × %s refresh)", smi, 3*DefaultProbeInterval, DefaultProbeInterval)
	if ok, reason := e.Health(); !ok || reason != want {
		t.Errorf("health = %v %q, want ok %q", ok, reason, want)
	}
	clk.Add(time.Hour)
	e.Observe(sourceObs(smi, clk.Now(), 0, telemetry.Error, "exit status 9"))
	want = fmt.Sprintf("%s: no answer for 1h0m0s (limit %s = 3 × %s refresh), last report error: exit status 9", smi, 3*DefaultProbeInterval, DefaultProbeInterval)
	if ok, reason := e.Health(); ok || reason != want {
		t.Errorf("health = %v %q, want unhealthy %q", ok, reason, want)
	}
	e.Observe(sourceObs(smi, clk.Now(), time.Second, telemetry.Error, "exit status 9"))
	want = smi + ": no answer for 1h0m0s (limit 5s = 3 × 1s refresh (at least 5s)), last report error: exit status 9"
	if ok, reason := e.Health(); ok || reason != want {
		t.Errorf("health = %v %q, want unhealthy %q", ok, reason, want)
	}
}

// With probes the sources do not decide: a live PromQL store does not
// hide probes that stopped.
func TestHealthzWithProbesIgnoresSources(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	e := New(Options{Now: clk.Now})
	clk.Add(3*DefaultProbeInterval + 2*DefaultProbeTimeout + time.Second)
	e.Observe(sourceObs("promql:http://127.0.0.1:9090", clk.Now(), 15*time.Second, telemetry.Live, ""))
	if ok, reason := e.Health(); ok || !strings.Contains(reason, "no probe result since start") {
		t.Errorf("health = %v %q, want unhealthy for want of probe results", ok, reason)
	}
}
