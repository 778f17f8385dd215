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

// A failure is the error of one refresh's request: once its source reports
// a later refresh that did not repeat it, the signal is no longer in error
// but as old as its last data (a histogram window comes a step and the
// store's lag after the store recovers). A failure sent with the report
// (the same refresh) stays, and so does one newer than the source's last
// report.
func TestFailureOverOnceSourceReportsLater(t *testing.T) {
	st := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	const src = "promql:http://prom"
	report := func(at time.Time, state State) {
		st.Observe(Observation{Kind: KindSource, At: at, Source: src, Interval: 5 * time.Second,
			Status: &SourceStatus{Name: "prometheus", State: state}})
	}
	sig := func(s Signal, at time.Time) SignalSnapshot {
		out, _ := st.Signal("ep", s, at, time.Minute)
		return out
	}
	st.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "ep", Signal: OutputTPS, Source: src, Value: 5, Interval: time.Minute})
	st.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "ep", Signal: Running, Source: src, Value: 2, Interval: 5 * time.Second})
	report(t0, Live)

	// Refresh at t1: every query timed out (endpoint-wide failure).
	t1 := t0.Add(10 * time.Second)
	st.Observe(Observation{Kind: KindFailure, At: t1, Endpoint: "ep", Source: src, Err: "query timed out"})
	// Refresh at t1 also sends a failure of a signal never observed.
	st.Observe(Observation{Kind: KindFailure, At: t1, Endpoint: "ep", Signal: TPOT, Source: src, Err: "query timed out"})
	report(t1, Error)
	if s := sig(OutputTPS, t1); s.State != Error || s.Err != "query timed out" {
		t.Fatalf("in the failing refresh: %s %q, want error", s.State, s.Err)
	}

	// Refresh at t2 answers, with no new value of OutputTPS or TPOT yet.
	t2 := t1.Add(5 * time.Second)
	st.Observe(Observation{Kind: KindSample, At: t2, Endpoint: "ep", Signal: Running, Source: src, Value: 3, Interval: 5 * time.Second})
	report(t2, Live)
	if s := sig(OutputTPS, t2); s.State != Live || s.Err != "" || !s.ObservedAt.Equal(t0) {
		t.Errorf("after recovery, last value 15s old of 1m cadence: %s %q at %s, want live as of t0", s.State, s.Err, s.ObservedAt)
	}
	late := t0.Add(3*time.Minute + 5*time.Second)
	report(late, Live) // the source still reporting: the figure's own age decides
	if s := sig(OutputTPS, late); s.State != Stale {
		t.Errorf("recovered, last value 3m5s old (the failure 2m55s): %s, want stale", s.State)
	}
	if s := sig(TPOT, t2); s.State != NoData || s.Err != "" {
		t.Errorf("recovered, never observed: %s %q, want no data", s.State, s.Err)
	}
	if s := sig(Running, t2); s.State != Live {
		t.Errorf("new value: %s, want live", s.State)
	}

	// Refresh at t3: only TPOT's query fails; the report comes with it.
	t3 := late.Add(5 * time.Second)
	st.Observe(Observation{Kind: KindFailure, At: t3, Endpoint: "ep", Signal: TPOT, Source: src, Err: "TPOT: query timed out"})
	if s := sig(TPOT, t3); s.State != Error {
		t.Errorf("failure newer than the last report: %s, want error", s.State)
	}
	report(t3, Error)
	if s := sig(TPOT, t3); s.State != Error || s.Err != "TPOT: query timed out" {
		t.Errorf("failure of the refresh reported: %s %q, want error", s.State, s.Err)
	}
	if s := sig(OutputTPS, t3); s.State != Stale || s.Err != "" {
		t.Errorf("other signal while TPOT fails: %s %q, want as old as its last value (stale)", s.State, s.Err)
	}
}

// A figure built on a track of a silent source is no fresher than the
// track: energy per token whose GPU power comes from a PromQL source that
// stopped reporting is stale with that power, not live; and where a live
// scrape feeds the same power, the signal falls back to it.
func TestSilentSourceTrackIsStaleForDerivedAndPreferred(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	const prom = "promql:http://prom"
	feed := func(st *Store, withScrapePower bool) {
		st.Observe(Observation{Kind: KindSource, At: t0, Source: prom, Interval: 5 * time.Second,
			Status: &SourceStatus{Name: "prometheus", State: Live, LastOK: t0}})
		// A minute's cadence: live by the track's own age for a minute.
		st.Observe(Observation{Kind: KindSample, At: t0, Endpoint: "ep", Signal: GPUPower, Source: prom, Value: 400, Interval: time.Minute})
		for i := range 21 {
			at := t0.Add(time.Duration(i) * time.Second)
			st.Observe(Observation{Kind: KindSample, At: at, Endpoint: "ep", Signal: OutputTPS, Source: "scrape:http://ep", Value: 200, Interval: time.Second})
			if withScrapePower {
				st.Observe(Observation{Kind: KindSample, At: at, Endpoint: "ep", Signal: GPUPower, Source: "scrape:http://ep", Value: 300, Interval: time.Second})
			}
		}
	}
	silent := t0.Add(20 * time.Second) // 4 intervals of 5 s without a report

	only := NewStore(StoreConfig{Prefer: []SourceKind{SourcePromQL, SourceScrape}})
	feed(only, false)
	ep := only.Snapshot(silent, time.Minute).Endpoints[0]
	if p := ep.Signals[GPUPower]; p.State != Stale {
		t.Fatalf("power of a silent source: %s, want stale", p.State)
	}
	if e := ep.Signals[EnergyPerToken]; e.State != Stale {
		t.Errorf("J/token from the power of a silent source: %s %+v, want stale like its power", e.State, e)
	}

	both := NewStore(StoreConfig{Prefer: []SourceKind{SourcePromQL, SourceScrape}})
	feed(both, true)
	ep = both.Snapshot(silent, time.Minute).Endpoints[0]
	if p := ep.Signals[GPUPower]; p.State != Live || p.Source != "scrape:http://ep" {
		t.Errorf("power with PromQL silent and a live scrape: %s from %s, want live from the scrape", p.State, p.Source)
	}
	if e := ep.Signals[EnergyPerToken]; e.State != Live || !strings.Contains(e.Source, "scrape:http://ep ÷") {
		t.Errorf("J/token with PromQL silent and a live scrape: %s from %s, want live from the scrape", e.State, e.Source)
	}
}
