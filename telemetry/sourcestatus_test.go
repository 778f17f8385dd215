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
// it reported, and so is a failing one, which says more than "stale".
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
	if got := state(t0.Add(14 * time.Second))["prometheus"]; got.State != Live {
		t.Errorf("within 3 intervals: %+v, want live", got)
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
