package telemetry

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func sample(ep string, sig Signal, v float64, at time.Time) Observation {
	return Observation{Kind: KindSample, Endpoint: ep, Signal: sig, Value: v, At: at, Source: "probe:http://x", Interval: time.Second}
}

func TestStoreProbeQuantilesAndStates(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Observe(Observation{Kind: KindEndpoint, Endpoint: "a", At: t0, Info: &Endpoint{Name: "a", Model: "m", Engine: EngineVLLM}})
	for i := 1; i <= 100; i++ {
		s.Observe(sample("a", TTFT, float64(i)/1000, t0.Add(time.Duration(i)*time.Second/10)))
	}
	now := t0.Add(10 * time.Second)
	snap := s.Snapshot(now, time.Minute)
	if len(snap.Endpoints) != 1 {
		t.Fatalf("endpoints: %d", len(snap.Endpoints))
	}
	ttft := snap.Endpoints[0].Signals[TTFT]
	if ttft.State != Live || ttft.Unit != "ms" || ttft.P50 == nil {
		t.Fatalf("ttft: %+v", ttft)
	}
	// samples 1..100 ms: p50 at rank 49.5 → 50.5 ms; p99 rank 98.01 → 99.01 ms
	if math.Abs(*ttft.P50-50.5) > 1e-3 || math.Abs(*ttft.P99-99.01) > 1e-3 {
		t.Errorf("p50 %v p99 %v", *ttft.P50, *ttft.P99)
	}
	if tpot := snap.Endpoints[0].Signals[TPOT]; tpot.State != Unknown || tpot.P50 != nil || tpot.Value != nil {
		t.Errorf("TPOT never observed must be unknown without figures, not zero: %+v", tpot)
	}
	// 10 s later nothing new: stale, last figures kept with their age.
	later := now.Add(10 * time.Second)
	ttft = s.Snapshot(later, time.Minute).Endpoints[0].Signals[TTFT]
	if ttft.State != Stale || ttft.P50 == nil || ttft.Age(later) < 10*time.Second {
		t.Errorf("want stale with last value, got %+v", ttft)
	}
	// Far beyond the window, still stale with the last figures.
	much := later.Add(10 * time.Minute)
	if ttft = s.Snapshot(much, time.Minute).Endpoints[0].Signals[TTFT]; ttft.State != Stale || ttft.P50 == nil {
		t.Errorf("want stale with last value outside window, got %+v", ttft)
	}
}

func TestFailureMarksSourceSignalsError(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Observe(sample("a", TTFT, 0.2, t0))
	s.Observe(sample("a", ProbeSuccess, 1, t0))
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: Running, Value: 3, At: t0, Source: "scrape:http://x/metrics", Interval: time.Second})
	s.Observe(Observation{Kind: KindFailure, Endpoint: "a", At: t0.Add(time.Second), Source: "probe:http://x", Err: "connect: refused"})
	s.Observe(sample("a", ProbeSuccess, 0, t0.Add(time.Second)))
	snap := s.Snapshot(t0.Add(2*time.Second), time.Minute).Endpoints[0]
	if got := snap.Signals[TTFT]; got.State != Error || got.Err != "connect: refused" || got.P50 == nil {
		t.Errorf("ttft after failure: %+v", got)
	}
	if got := snap.Signals[Running]; got.State != Live {
		t.Errorf("scrape signal must not be touched by a probe failure: %+v", got)
	}
	er := snap.Signals[ErrorRate]
	if er.Value == nil || *er.Value != 50 || er.Unit != "%" {
		t.Errorf("error rate: %+v", er)
	}
	// A new success clears the error.
	s.Observe(sample("a", TTFT, 0.3, t0.Add(3*time.Second)))
	if got := s.Snapshot(t0.Add(3*time.Second), time.Minute).Endpoints[0].Signals[TTFT]; got.State != Live {
		t.Errorf("after recovery: %+v", got)
	}
}

func TestHistogramWindowQuantile(t *testing.T) {
	s := NewStore(StoreConfig{})
	src := "scrape:http://x/metrics"
	// Two scrapes' increments; their sum is the hand-worked histogram of
	// TestHistogramQuantileByHand.
	inc1 := []Bucket{{0.1, 4}, {0.5, 10}, {1, 15}, {inf(), 20}}
	inc2 := []Bucket{{0.1, 6}, {0.5, 20}, {1, 25}, {inf(), 30}}
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TTFT, Buckets: inc1, At: t0, Source: src, Interval: time.Second})
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TTFT, Buckets: inc2, At: t0.Add(20 * time.Second), Source: src, Interval: time.Second})
	got := s.Snapshot(t0.Add(21*time.Second), time.Minute).Endpoints[0].Signals[TTFT]
	if got.P50 == nil || math.Abs(*got.P50-400) > 1e-9 || *got.P99 != 1000 || got.Count != 50 {
		t.Errorf("window quantiles: %+v", got)
	}
	// A 15 s window holds only the second increment: p50 = rank 15 in (0.1,0.5] → 0.1+0.4·9/14
	v, n := s.Quantile("a", TTFT, 0.5, t0.Add(21*time.Second), 15*time.Second)
	if n != 30 || math.Abs(v-(0.1+0.4*9.0/14)) > 1e-9 {
		t.Errorf("15s window: %v over %v", v, n)
	}
	// An increment with no requests: the source answered, nothing happened.
	zero := []Bucket{{0.1, 0}, {0.5, 0}, {1, 0}, {inf(), 0}}
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TTFT, Buckets: zero, At: t0.Add(200 * time.Second), Source: src, Interval: time.Second})
	got = s.Snapshot(t0.Add(200*time.Second), time.Minute).Endpoints[0].Signals[TTFT]
	if got.State != NoData || got.P50 != nil {
		t.Errorf("idle window must be no data, not 0: %+v", got)
	}
}

// A probed endpoint's client figures stay the probe's, stale or failing:
// the engine's own figure is beside them (Server), never in their place.
func TestClientFiguresNeverReplacedByServer(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Observe(sample("a", TTFT, 0.5, t0))
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TTFT, Source: "scrape:u", Interval: time.Second,
		Buckets: []Bucket{{0.1, 1}, {inf(), 1}}, At: t0.Add(30 * time.Second)})
	ep := s.Snapshot(t0.Add(30*time.Second), time.Minute).Endpoints[0]
	got, server := ep.Signals[TTFT], ep.Server[TTFT]
	if !strings.HasPrefix(got.Source, "probe:") || got.State != Stale || got.P50 == nil || *got.P50 != 500 {
		t.Errorf("stale probe must stay the client figure, stale: %+v", got)
	}
	if !strings.HasPrefix(server.Source, "scrape:") || server.State != Live || server.P50 == nil {
		t.Errorf("server figure beside it: %+v", server)
	}
	// Every probe now fails: the client figures say so, with the reason.
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: ProbeSuccess, Value: 0, Source: "probe:http://x", At: t0.Add(31 * time.Second), Interval: time.Second})
	s.Observe(Observation{Kind: KindFailure, Endpoint: "a", Source: "probe:http://x", Err: "http_5xx: 503", At: t0.Add(31 * time.Second), Interval: time.Second})
	ep = s.Snapshot(t0.Add(31*time.Second), time.Minute).Endpoints[0]
	if got := ep.Signals[TTFT]; got.State != Error || got.Err != "http_5xx: 503" || !strings.HasPrefix(got.Source, "probe:") {
		t.Errorf("failing probe must show as an error: %+v", got)
	}
	if v, _ := s.Quantile("a", TTFT, 0.5, t0.Add(31*time.Second), time.Minute); v != 0.5 {
		t.Errorf("quantile must read the probe's own samples, got %v", v)
	}
	if er := ep.Signals[ErrorRate]; er.State != Live || er.Value == nil || *er.Value != 100 || er.Count != 1 {
		t.Errorf("probe error rate: a failed probe is data: %+v", er)
	}
}

// An endpoint whose probes failed from the first one has no probe track:
// its client figures show the failure, and the engine's are beside them.
func TestProbedEndpointFailingFromStart(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Observe(Observation{Kind: KindEndpoint, Endpoint: "a", Source: "probe:http://x", At: t0, Info: &Endpoint{Name: "a"}})
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TPOT, Source: "scrape:u", Interval: time.Second,
		Buckets: []Bucket{{0.01, 5}, {inf(), 5}}, At: t0})
	ep := s.Snapshot(t0, time.Minute).Endpoints[0]
	if got := ep.Signals[TPOT]; got.State != Unknown || got.P50 != nil {
		t.Errorf("before the first probe: unknown, not the server's figure: %+v", got)
	}
	s.Observe(Observation{Kind: KindFailure, Endpoint: "a", Source: "probe:http://x", Err: "connection refused", At: t0.Add(time.Second)})
	ep = s.Snapshot(t0.Add(time.Second), time.Minute).Endpoints[0]
	if got := ep.Signals[TPOT]; got.State != Error || got.Err != "connection refused" || got.P50 != nil {
		t.Errorf("failed first probe: %+v", got)
	}
	if got := ep.Server[TPOT]; got.State != Live || got.P50 == nil {
		t.Errorf("server TPOT: %+v", got)
	}
}

// Server error rate: failed / all requests over the window from counter
// increments, steady when a scrape saw no requests.
func TestServerErrorRateOverWindow(t *testing.T) {
	s := NewStore(StoreConfig{})
	add := func(at time.Duration, failed, total float64) {
		b, sum := ErrorCounts(failed, total)
		s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: ErrorRate, Source: "scrape:u", Interval: time.Second, Buckets: b, Value: sum, At: t0.Add(at)})
	}
	add(0, 1, 10)
	add(10*time.Second, 0, 0) // idle scrape
	add(20*time.Second, 3, 10)
	got := s.Snapshot(t0.Add(20*time.Second), time.Minute).Endpoints[0].Signals[ErrorRate]
	if got.State != Live || got.Value == nil || math.Abs(*got.Value-20) > 1e-9 || got.Count != 20 {
		t.Errorf("4 of 20 failed = 20%%: %+v", got)
	}
	add(200*time.Second, 0, 0)
	got = s.Snapshot(t0.Add(200*time.Second), time.Minute).Endpoints[0].Signals[ErrorRate]
	if got.State != NoData || got.Value != nil {
		t.Errorf("a window without requests is no data, not 0: %+v", got)
	}
}

func TestSnapshotJSONShape(t *testing.T) {
	s := NewStore(StoreConfig{})
	s.Observe(Observation{Kind: KindEndpoint, Endpoint: "h:8000/m", At: t0, Info: &Endpoint{Name: "h:8000/m", Model: "m", Engine: EngineVLLM}})
	s.Observe(sample("h:8000/m", TTFT, 0.25, t0))
	s.Observe(Observation{Kind: KindSample, Endpoint: "h:8000/m", Signal: KVCache, Value: 0.42, At: t0, Source: "scrape:u", Interval: time.Second})
	s.Observe(Observation{Kind: KindSource, At: t0, Status: &SourceStatus{Name: "probe h", Kind: SourceProbe, URL: "http://h:8000", State: Live}})
	b, err := json.Marshal(s.Snapshot(t0.Add(time.Second), time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, want := range []string{`"name":"h:8000/m"`, `"engine":"vllm"`, `"ttft":{"unit":"ms","p50_ms":250`, `"kv_cache":{"unit":"ratio","value_ratio":0.42,`, `"state":"live"`, `"observed_at":"2026-11-30T12:00:00Z"`, `"sources":[{"name":"probe h","kind":"probe","url":"http://h:8000","state":"live"`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %s:\n%s", want, js)
		}
	}
}

func TestProbeHistoryBounded(t *testing.T) {
	s := NewStore(StoreConfig{ProbeHistory: 3})
	for i := 0; i < 5; i++ {
		s.Observe(Observation{Kind: KindProbe, Endpoint: "a", At: t0.Add(time.Duration(i) * time.Second), Probe: &ProbeRecord{OK: true, OutputTokens: i}})
	}
	p := s.Probes("a")
	if len(p) != 3 || p[0].OutputTokens != 2 || p[2].OutputTokens != 4 {
		t.Errorf("probes: %+v", p)
	}
}

func TestRingPoints(t *testing.T) {
	r := NewRing(time.Second, time.Minute)
	r.Add(t0, 1)
	r.Add(t0.Add(500*time.Millisecond), 3)
	r.Add(t0.Add(2*time.Second), 10)
	pts := r.Points(t0.Add(2*time.Second), 3*time.Second, 3)
	if pts[0] != 2 || !math.IsNaN(pts[1]) || pts[2] != 10 {
		t.Errorf("points: %v", pts)
	}
	// Past the span everything is gone, and gaps are NaN, never zero.
	pts = r.Points(t0.Add(5*time.Minute), time.Minute, 4)
	for _, p := range pts {
		if !math.IsNaN(p) {
			t.Errorf("old data leaked: %v", pts)
		}
	}
	r.Add(t0.Add(5*time.Minute), 7)
	if pts = r.Points(t0.Add(5*time.Minute), 2*time.Second, 2); pts[1] != 7 || !math.IsNaN(pts[0]) {
		t.Errorf("after wrap: %v", pts)
	}
}

// A window whose observations all lie beyond the highest finite bound
// reads "≥ that bound" in the snapshot and its JSON, with the mean from
// the histogram's sum; raw samples (a probe's) are never bounds, and a
// sum of 0 (no _sum in the answer) gives no mean rather than 0.
func TestSnapshotMarksQuantileBounds(t *testing.T) {
	s := NewStore(StoreConfig{})
	src := "scrape:http://x/metrics"
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: PrefillTime, At: t0, Source: src, Interval: time.Second,
		Buckets: []Bucket{{0.3, 0}, {7680, 0}, {inf(), 4}}, Value: 4 * 9000})
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: QueueTime, At: t0, Source: src, Interval: time.Second,
		Buckets: []Bucket{{0.3, 5}, {inf(), 5}}, Value: 0})
	s.Observe(sample("a", TTFT, 0.02, t0))
	snap := s.Snapshot(t0.Add(time.Second), time.Minute).Endpoints[0]
	prefill := snap.Signals[PrefillTime]
	if prefill.P50 == nil || *prefill.P50 != 7680e3 || prefill.P50Bound != BoundLower || prefill.P99Bound != BoundLower {
		t.Errorf("prefill all in +Inf: %+v, want ≥7680 s", prefill)
	}
	if prefill.Mean == nil || *prefill.Mean != 9000e3 {
		t.Errorf("prefill mean %v, want 9000 s", prefill.Mean)
	}
	js, err := json.Marshal(prefill)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"p50_bound", "p90_bound", "p95_bound", "p99_bound"} {
		if doc[k] != "lower" {
			t.Errorf("%s = %v in %s", k, doc[k], js)
		}
	}
	if q := snap.Signals[QueueTime]; q.P50Bound != BoundUpper || q.Mean != nil {
		t.Errorf("queue without a sum: %+v, want ≤300ms and no mean", q)
	}
	if ttft := snap.Signals[TTFT]; ttft.P50 == nil || ttft.P50Bound != NotBound || ttft.P99Bound != NotBound || ttft.Mean != nil {
		t.Errorf("probe samples marked as bounds: %+v", ttft)
	}
}

// QA: probe_success read 0.974 … 0.745 in --json during a total outage
// (state error) and 0.527 after the recovery (live): the window's mean.
// Its definition and the exporter's gauge are the last probe's 0 or 1;
// the window's share of failures is the error rate.
func TestProbeSuccessIsTheLastProbe(t *testing.T) {
	s := NewStore(StoreConfig{})
	at := t0
	probeResult := func(ok bool) {
		at = at.Add(time.Second)
		if ok {
			s.Observe(sample("a", ProbeSuccess, 1, at))
			return
		}
		s.Observe(sample("a", ProbeSuccess, 0, at))
		s.Observe(Observation{Kind: KindFailure, Endpoint: "a", At: at, Source: "probe:http://x", Err: "connect: refused", Interval: time.Second})
	}
	expect := func(what string, value float64, state State, errorRate float64) {
		t.Helper()
		snap := s.Snapshot(at, time.Minute).Endpoints[0]
		b, err := json.Marshal(SignalMap{ProbeSuccess: snap.Signals[ProbeSuccess]})
		if err != nil {
			t.Fatal(err)
		}
		ps := snap.Signals[ProbeSuccess]
		if ps.Value == nil || *ps.Value != value || ps.State != state || !strings.Contains(string(b), fmt.Sprintf(`"value_ratio":%g`, value)) {
			t.Errorf("%s: probe_success %s, want value %g state %s", what, b, value, state)
		}
		if er := snap.Signals[ErrorRate]; er.Value == nil || math.Abs(*er.Value-errorRate) > 1e-9 {
			t.Errorf("%s: error rate %+v, want %g %%", what, er, errorRate)
		}
	}
	for range 30 {
		probeResult(true)
	}
	expect("all up", 1, Live, 0)
	for range 10 {
		probeResult(false)
	}
	expect("outage", 0, Error, 100*10.0/40)
	probeResult(true)
	expect("recovered", 1, Live, 100*10.0/41)
}

// A snapshot's endpoint labels stay as they were while the store takes new
// announcements: views read (and JSON-encode) them outside the store's
// lock, so the store must never change a map it has handed out (the race
// detector caught a down target's label written during an encode).
func TestSnapshotLabelsNotChangedByLaterAnnouncements(t *testing.T) {
	s := NewStore(StoreConfig{})
	at := time.Unix(1_700_000_000, 0)
	announce := func(v string) {
		s.Observe(Observation{Kind: KindEndpoint, At: at, Endpoint: "e", Info: &Endpoint{Name: "e", Labels: map[string]string{"target": v}}})
	}
	announce("down since 12:00: refused")
	snap := s.Snapshot(at, time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			if i%2 == 0 {
				announce("")
			} else {
				announce("down since 12:01: refused")
			}
		}
	}()
	for range 200 {
		if got := snap.Endpoints[0].Labels["target"]; got != "down since 12:00: refused" {
			t.Fatalf("a snapshot's label changed under it: %q", got)
		}
	}
	<-done
}
