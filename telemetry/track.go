package telemetry

import (
	"math"
	"strings"
	"time"
)

// track is one signal of one endpoint from one kind of source (a probe's
// TTFT and a scrape's TTFT are different tracks: one is what a client
// feels, the other what the server measured).
type track struct {
	signal     Signal
	sourceKind string
	source     string
	interval   time.Duration

	chart   *Ring
	samples *sampleWindow // raw distribution samples (probes)
	hist    *histWindow   // histogram increments (scrapes, PromQL)

	last       float64
	lastAt     time.Time // last observation of any kind
	lastGoodAt time.Time // last value
	hasValue   bool
	state      State // Live, NoData or Error as last reported
	err        string
	approx     bool
}

func sourceKindOf(source string) string {
	kind, _, _ := strings.Cut(source, ":")
	return kind
}

func (s *Store) newTrack(sig Signal, source string) *track {
	t := &track{signal: sig, sourceKind: sourceKindOf(source), source: source,
		chart: NewRing(s.cfg.ChartResolution, s.cfg.ChartSpan)}
	if sig.Info().Distribution || t.sourceKind == "probe" {
		t.samples = newSampleWindow(s.cfg.MaxSamples)
	}
	return t
}

func (t *track) observe(o Observation, cfg StoreConfig) {
	if o.Source != "" {
		t.source = o.Source
	}
	if o.Interval > 0 {
		t.interval = o.Interval
	}
	if o.At.After(t.lastAt) {
		t.lastAt = o.At
	}
	switch o.Kind {
	case KindSample:
		if math.IsNaN(o.Value) || math.IsInf(o.Value, 0) {
			t.state, t.err = NoData, ""
			return
		}
		t.last, t.hasValue, t.lastGoodAt, t.state, t.err, t.approx = o.Value, true, o.At, Live, "", o.Approx
		t.chart.Add(o.At, o.Value)
		if t.samples != nil {
			t.samples.add(o.At, o.Value)
		}
	case KindHistogram:
		if t.hist == nil {
			t.hist = newHistWindow(cfg.HistResolution, cfg.MaxWindow)
		}
		t.hist.add(o.At, o.Buckets, o.Value)
		t.state, t.err, t.approx = Live, "", o.Approx
		if q := HistogramQuantile(0.5, o.Buckets); !math.IsNaN(q) {
			t.last, t.hasValue, t.lastGoodAt = q, true, o.At
			t.chart.Add(o.At, q)
		}
	case KindNoData:
		t.state, t.err = NoData, ""
	case KindFailure:
		t.state, t.err = Error, o.Err
	}
}

// stateAt is the state a view must show at now.
func (t *track) stateAt(now time.Time, cfg StoreConfig) State {
	if t.state == Error {
		return Error
	}
	if t.lastAt.IsZero() {
		return Unknown
	}
	if now.Sub(t.lastAt) > t.staleAfter(cfg) {
		return Stale
	}
	return t.state
}

func (t *track) staleAfter(cfg StoreConfig) time.Duration {
	d := time.Duration(cfg.StaleIntervals * float64(t.interval))
	if d < cfg.MinStaleAfter {
		d = cfg.MinStaleAfter
	}
	return d
}
