package telemetry

import (
	"strings"
	"testing"
	"time"
)

// A source that promised a report every interval and went silent (a store
// that accepts queries and never answers keeps a refresh in flight) is
// stale after StaleIntervals of them, whatever its last report said; one
// that names no interval (a probe, whose stream may run long) is left as
// it reported, and so is a failing one, which says more than "stale". The
// silent source's figures are stale with it, whatever their own cadence.
func TestSilentSourceIsStale(t *testing.T) {
	st := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	st.Observe(Observation{Kind: KindSource, At: t0, Source: "promql", Interval: 5 * time.Second,
		Status: &SourceStatus{Name: "prometheus", State: Live, LastOK: t0}})
	st.Observe(Observation{Kind: KindSource, At: t0, Source: "probe",
		Status: &SourceStatus{Name: "probe a", State: Live, LastOK: t0}})
	st.Observe(Observation{Kind: KindSource, At: t0, Source: "scrape", Interval: time.Second,
		Status: &SourceStatus{Name: "scrape b", State: Error, Err: "connection refused"}})
	state := func(at time.Time) map[string]SourceStatus {
		out := map[string]SourceStatus{}
		for _, s := range st.Snapshot(at, time.Minute).Sources {
			out[s.Name] = s
		}
		return out
	}
	// A figure of the source with a long interval (a histogram step):
	// live by its own cadence, stale once its source is silent.
	st.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "ep", Signal: OutputTPS, Source: "promql", Value: 5, Interval: time.Minute})
	figure := func(at time.Time) State {
		s, _ := st.Signal("ep", OutputTPS, at, time.Minute)
		return s.State
	}
	if got := state(t0.Add(14 * time.Second))["prometheus"]; got.State != Live || figure(t0.Add(14*time.Second)) != Live {
		t.Errorf("within 3 intervals: %+v, figure %s; want live", got, figure(t0.Add(14*time.Second)))
	}
	if f := figure(t0.Add(20 * time.Second)); f != Stale {
		t.Errorf("figure of a silent source: %s, want stale", f)
	}
	got := state(t0.Add(72 * time.Second))
	if p := got["prometheus"]; p.State != Stale || !strings.Contains(p.Err, "no report for 72s (one expected every 5s)") {
		t.Errorf("silent 72s: %+v, want stale, said", p)
	}
	if p := got["probe a"]; p.State != Live {
		t.Errorf("probe without interval: %+v, want as reported", p)
	}
	if p := got["scrape b"]; p.State != Error || p.Err != "connection refused" {
		t.Errorf("failing source: %+v, want its error kept", p)
	}
}
