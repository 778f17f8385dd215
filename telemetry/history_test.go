package telemetry

import (
	"testing"
	"time"
)

// Backfilled history fills the window but never the current state, and a
// window reaching before the oldest data says where the data begin.
func TestHistoryFillsWindowNotState(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	src := "promql:http://p"
	inc := func(n float64) []Bucket { return []Bucket{{0.1, n}, {inf(), n}} }
	s.Observe(Observation{Kind: KindFailure, Endpoint: "a", Signal: TTFT, Source: src, At: t0, Err: "boom", Interval: 15 * time.Second})
	for i := 1; i <= 10; i++ { // history, older than the failure: (t0−10m, t0]
		s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TTFT, Source: src, History: true,
			At: t0.Add(time.Duration(i-10) * time.Minute), Interval: time.Minute, Buckets: inc(60)})
	}
	got, ok := s.Signal("a", TTFT, t0.Add(time.Second), 15*time.Minute)
	if !ok || got.State != Error {
		t.Fatalf("after history the state is %v, want the live Error", got.State)
	}
	if got.Count != 600 {
		t.Errorf("count over 15m %v, want the 600 backfilled", got.Count)
	}
	if want := t0.Add(-10 * time.Minute); !got.DataSince.Equal(want) {
		t.Errorf("DataSince %s, want %s (history shorter than the window)", got.DataSince, want)
	}
	if got, _ := s.Signal("a", TTFT, t0.Add(time.Second), 5*time.Minute); !got.DataSince.IsZero() {
		t.Errorf("a 5m window inside the data has DataSince %s", got.DataSince)
	}
	// A history increment with another bucket layout must not reset the
	// live one.
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TTFT, Source: src, History: true,
		At: t0.Add(-11 * time.Minute), Interval: time.Minute, Buckets: []Bucket{{0.5, 1}, {inf(), 1}}})
	if got, _ := s.Signal("a", TTFT, t0.Add(time.Second), 15*time.Minute); got.Count != 600 {
		t.Errorf("count %v after a history increment with another layout, want 600", got.Count)
	}
}

func TestYoungRateFlag(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: OutputTPS, Source: "promql:u", At: t0, Value: 32, SeriesAge: 15 * time.Second, Interval: 5 * time.Second})
	got, _ := s.Signal("a", OutputTPS, t0, 5*time.Minute)
	if !got.Young || got.SeriesAgeS != 15 {
		t.Errorf("young rate: %+v, want Young with age 15s", got)
	}
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: OutputTPS, Source: "promql:u", At: t0.Add(5 * time.Second), Value: 900, Interval: 5 * time.Second})
	if got, _ := s.Signal("a", OutputTPS, t0.Add(5*time.Second), 5*time.Minute); got.Young {
		t.Errorf("a rate no longer young still flagged: %+v", got)
	}
}

// The young mark goes on counters' rates only: a ratio, share or mean of
// two counters over a young series is short in both counts alike, so it
// does not read low. The rate window travels to the snapshot either way.
func TestYoungMarkOnlyOnCounterRates(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	young := map[Signal]bool{OutputTPS: true, RequestRate: true, PromptTPS: true, Preemptions: true, EngineReadBytes: true,
		ErrorRate: false, PrefixCacheHit: false, SpecAccept: false, SpecAcceptLen: false, TPOT: false, KVCache: false}
	for sig, want := range young {
		s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: sig, Source: "promql:u", At: t0, Value: 0.5,
			SeriesAge: 2 * time.Minute, RateWindow: 5 * time.Minute, Interval: 5 * time.Second})
		got, _ := s.Signal("a", sig, t0, time.Minute)
		if got.Young != want || ReadsLowWhenYoung(sig) != want {
			t.Errorf("%s over a 2m-old series: Young %v (rule %v), want %v", sig, got.Young, ReadsLowWhenYoung(sig), want)
		}
		if got.RateWindowS != 300 {
			t.Errorf("%s: rate window %vs, want the source's 300s", sig, got.RateWindowS)
		}
	}
}

// A PromQL track's chart slots are as wide as its interval; a probe's stay
// at ChartResolution. Distribution tracks fed histograms hold no samples.
func TestChartSlotsFollowPromQLInterval(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: Running, Source: "promql:u", At: t0, Value: 3, Interval: 15 * time.Second})
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: TTFT, Source: "probe:u", At: t0, Value: 0.2, Interval: 15 * time.Second})
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: ITL, Source: "promql:u", At: t0, Interval: 15 * time.Second, Buckets: []Bucket{{0.1, 1}, {inf(), 1}}})
	ep := s.endpoints["a"]
	if r := ep.tracks[trackKey{Running, "promql"}].chart.res; r != 15*time.Second {
		t.Errorf("PromQL gauge chart slot %s, want its 15s interval", r)
	}
	if r := ep.tracks[trackKey{TTFT, "probe"}].chart.res; r != time.Second {
		t.Errorf("probe chart slot %s, want ChartResolution", r)
	}
	if w := ep.tracks[trackKey{ITL, "promql"}].samples; w == nil || cap(w.at) != 0 {
		t.Errorf("a histogram-fed track holds sample memory: %+v", w)
	}
	if got := s.Series("a", Running, t0, time.Minute, 4); got[3] != 3 {
		t.Errorf("chart of the PromQL gauge %v, want its value in the last point", got)
	}
	// A backfilled sample may come before the first live value: its
	// Interval, the live one, sizes the chart too; a backfilled histogram's
	// (its window, the backfill's step) does not.
	s.Observe(Observation{Kind: KindSample, Endpoint: "b", Signal: OutputTPS, Source: "promql:u", At: t0.Add(-time.Minute), Value: 9,
		Interval: 15 * time.Second, History: true})
	s.Observe(Observation{Kind: KindHistogram, Endpoint: "b", Signal: ITL, Source: "promql:u", At: t0.Add(-time.Minute),
		Interval: 5 * time.Minute, Buckets: []Bucket{{0.1, 1}, {inf(), 1}}, History: true})
	ep = s.endpoints["b"]
	if r := ep.tracks[trackKey{OutputTPS, "promql"}].chart.res; r != 15*time.Second {
		t.Errorf("chart made by a backfilled sample has %s slots, want its 15s live interval", r)
	}
	if r := ep.tracks[trackKey{ITL, "promql"}].chart.res; r != time.Second {
		t.Errorf("chart made by a backfilled histogram has %s slots, want ChartResolution", r)
	}
}

// A source kind outside StoreConfig.Prefer still feeds the snapshot, as
// the last resort.
func TestSnapshotUnpreferredKind(t *testing.T) {
	s := NewStore(StoreConfig{})
	t0 := time.Unix(1_700_000_000, 0)
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: Running, Source: "custom:u", At: t0, Value: 4, Interval: time.Second})
	s.Observe(Observation{Kind: KindSample, Endpoint: "a", Signal: Waiting, Source: "promql:u", At: t0, Value: 1, Interval: time.Second})
	snap := s.Snapshot(t0, time.Minute)
	if len(snap.Endpoints) != 1 {
		t.Fatalf("%d endpoints", len(snap.Endpoints))
	}
	sig := snap.Endpoints[0].Signals
	if r, ok := sig[Running]; !ok || r.Value == nil || *r.Value != 4 || r.Source != "custom:u" {
		t.Errorf("running from an unpreferred kind: %+v", r)
	}
	if w, ok := sig[Waiting]; !ok || w.Value == nil || *w.Value != 1 {
		t.Errorf("waiting: %+v", w)
	}
}

// A histogram step is charted as its mean (Δsum/Δcount), as the charts'
// "mean per time bin" says, not the interpolated median, which sits at
// half the lowest bucket's edge when every observation falls in it; with
// no sum (PromQL's absent _sum) the median is what the buckets give.
func TestHistogramStepChartedAsItsMean(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, c := range []struct {
		name string
		sum  float64
		want float64
	}{
		{"sum known: the mean", 40 * 0.0075, 7.5}, // charted in ms
		{"no sum: the median", 0, 5},
	} {
		s := NewStore(StoreConfig{})
		s.Observe(Observation{Kind: KindHistogram, Endpoint: "a", Signal: TPOT, Source: "scrape:u", At: t0, Interval: time.Second,
			Value: c.sum, Buckets: []Bucket{{0.01, 40}, {0.025, 40}, {inf(), 40}}})
		got := s.Series("a", TPOT, t0, time.Minute, 4)
		if d := got[3] - c.want; d > 1e-6 || d < -1e-6 { // the chart holds float32
			t.Errorf("%s: charted %v, want %v", c.name, got, c.want)
		}
	}
}
