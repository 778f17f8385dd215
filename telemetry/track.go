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
	sourceKind SourceKind
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
	// dataAt is the last observation other than a failure: what staleness
	// counts from once a failure is over. errAt is when the failure in err
	// was reported, and beforeErr the state the failure interrupted.
	dataAt    time.Time
	errAt     time.Time
	beforeErr State
	approx    bool
	// firstAt is where the oldest data held begins (a histogram increment
	// at its window's start): a window reaching further back is partly
	// filled.
	firstAt time.Time
	// seriesAge is the last value's SeriesAge: a rate over a young series.
	seriesAge time.Duration
	// rateWindow is the last value's RateWindow.
	rateWindow time.Duration
	// share is the last value's Share (GPU power of shared GPUs).
	share *GPUShare
}

// SourceKind is the kind of a source: SourceStatus.Kind, and the part of
// an Observation.Source before its first colon ("probe" of
// "probe:http://…"). Recordings and JSON carry it as that string.
type SourceKind string

// The kinds of source.
const (
	SourceProbe  SourceKind = "probe"
	SourceScrape SourceKind = "scrape"
	SourcePromQL SourceKind = "promql"
	SourceDCGM   SourceKind = "dcgm"
	SourceSMI    SourceKind = "nvidia-smi"
	// SourceNotify is a notifier's health (a webhook, an alert command):
	// not a source of figures.
	SourceNotify SourceKind = "notify"
)

// At is the Observation.Source of this kind at where ("probe:http://…").
func (k SourceKind) At(where string) string { return string(k) + ":" + where }

// SourceKindOf is the kind part of an Observation.Source: the one place
// that parses it.
func SourceKindOf(source string) SourceKind {
	kind, _, _ := strings.Cut(source, ":")
	return SourceKind(kind)
}

// Side says whose view a figure is.
type Side string

const (
	// Client figures are what ttftop's own probes measured: network,
	// gateway and engine included.
	Client Side = "client"
	// Server figures are the engine's own (scraped /metrics, PromQL, GPU
	// exporters): they exclude the network and see every request.
	Server Side = "server"
)

// SideOf tells the side of a source kind.
func SideOf(kind SourceKind) Side {
	if kind == SourceProbe {
		return Client
	}
	return Server
}

// ClientSignal reports whether probes measure sig, so that a probed
// endpoint shows the client's figure of it.
func ClientSignal(sig Signal) bool {
	switch sig {
	case TTFT, TTFA, TPOT, ITL, E2E, OutputTPS, ErrorRate, ProbeSuccess, Goodput:
		return true
	}
	return false
}

func (s *Store) newTrack(sig Signal, source string) *track {
	t := &track{signal: sig, sourceKind: SourceKindOf(source), source: source}
	if sig.Info().Distribution || t.sourceKind == SourceProbe {
		t.samples = newSampleWindow(s.cfg.MaxSamples)
	}
	return t
}

func (t *track) observe(o Observation, cfg StoreConfig) {
	if o.History {
		t.observeHistory(o, cfg)
		return
	}
	if o.Source != "" {
		t.source = o.Source
	}
	if o.Interval > 0 {
		t.interval = o.Interval
	}
	if o.At.After(t.lastAt) {
		t.lastAt = o.At
	}
	if o.Kind != KindFailure && o.At.After(t.dataAt) {
		t.dataAt = o.At
	}
	switch o.Kind {
	case KindSample:
		if math.IsNaN(o.Value) || math.IsInf(o.Value, 0) {
			t.state, t.err = NoData, ""
			return
		}
		t.last, t.hasValue, t.lastGoodAt, t.state, t.err, t.approx = o.Value, true, o.At, Live, "", o.Approx
		t.seriesAge, t.rateWindow = o.SeriesAge, o.RateWindow
		t.share = o.Share.clone()
		t.addSample(o, cfg)
	case KindHistogram:
		if t.hist == nil {
			t.hist = newHistWindow(cfg.HistResolution, cfg.MaxWindow)
		}
		t.hist.add(o.At, o.Buckets, o.Value)
		t.noteData(o.At.Add(-o.Interval))
		t.state, t.err, t.approx = Live, "", o.Approx
		if !t.signal.Info().Distribution {
			// A counts histogram (ErrorCounts): chart the increment's ratio.
			if total := lastCount(o.Buckets); total > 0 {
				t.last, t.hasValue, t.lastGoodAt = min(o.Value/total, 1), true, o.At
				t.plot(o, cfg, t.last)
			}
			return
		}
		if q := HistogramQuantile(0.5, o.Buckets); !math.IsNaN(q) {
			t.last, t.hasValue, t.lastGoodAt = q, true, o.At
			t.plot(o, cfg, stepMean(o))
		}
	case KindNoData:
		t.state, t.err = NoData, ""
	case KindFailure:
		if t.state != Error {
			t.beforeErr = t.state
		}
		t.state, t.err, t.errAt = Error, o.Err, o.At
	}
}

// observeHistory adds a backfilled value to the windows and the chart
// only: the current value, state and staleness stay the live data's.
func (t *track) observeHistory(o Observation, cfg StoreConfig) {
	switch o.Kind {
	case KindSample:
		if math.IsNaN(o.Value) || math.IsInf(o.Value, 0) {
			return
		}
		t.addSample(o, cfg)
	case KindHistogram:
		if t.hist == nil {
			t.hist = newHistWindow(cfg.HistResolution, cfg.MaxWindow)
		}
		if !t.hist.addHistory(o.At, o.Buckets, o.Value) {
			return
		}
		t.noteData(o.At.Add(-o.Interval))
		var v float64
		if t.signal.Info().Distribution {
			v = stepMean(o)
		} else if total := lastCount(o.Buckets); total > 0 {
			v = min(o.Value/total, 1)
		} else {
			return
		}
		t.plot(o, cfg, v)
	}
}

// stepMean is what a chart plots for one histogram step: its mean
// (Δsum/Δcount), as the charts' "mean per time bin" says; where the sum is
// missing (PromQL answers 0 for an absent _sum) or the step is empty, the
// interpolated median, the best the buckets give. The median alone sat at
// half the lowest bucket's edge whenever every observation fell in it
// (5 ms for a 7.5 ms TPOT).
func stepMean(o Observation) float64 {
	if n := lastCount(o.Buckets); n > 0 && o.Value > 0 {
		return o.Value / n
	}
	return HistogramQuantile(0.5, o.Buckets)
}

// addSample puts a sample's value into the chart and the sample window,
// live or history alike.
func (t *track) addSample(o Observation, cfg StoreConfig) {
	t.noteData(o.At)
	t.plot(o, cfg, o.Value)
	if t.samples != nil {
		t.samples.add(o.At, o.Value)
	}
}

// plot adds v at o.At to the chart, made on the first value. A PromQL
// track's slots are as wide as its live interval (at least
// ChartResolution): its values never come more often, and 1,000 endpoints'
// charts at 1 s would hold a quarter of a GiB of empty slots. A History
// sample carries that live interval too (a History histogram's Interval
// is its window, as coarse as the backfill's step).
func (t *track) plot(o Observation, cfg StoreConfig, v float64) {
	if t.chart == nil {
		res := cfg.ChartResolution
		if t.sourceKind == SourcePromQL && (!o.History || o.Kind == KindSample) && o.Interval > res {
			res = o.Interval / cfg.ChartResolution * cfg.ChartResolution
		}
		t.chart = NewRing(res, cfg.ChartSpan)
	}
	t.chart.Add(o.At, v)
}

// noteData moves firstAt back to from.
func (t *track) noteData(from time.Time) {
	if t.firstAt.IsZero() || from.Before(t.firstAt) {
		t.firstAt = from
	}
}

func lastCount(b []Bucket) float64 {
	total := 0.0
	for _, bk := range b {
		if math.IsInf(bk.UpperBound, 1) {
			total = bk.Count
		}
	}
	return total
}

// ErrorCounts is the observation of an engine's request counters since
// the previous read: failed of total requests, as a histogram of the
// per-request failure indicator (0 ok, 1 failed): one bucket le=0 holding
// the successes, +Inf all requests, and the sum the failures. The store
// sums them over any window, so the error rate over 5 m is failed/all in
// those 5 m, and a scrape without requests is no news rather than "no
// data".
func ErrorCounts(failed, total float64) (buckets []Bucket, sum float64) {
	return []Bucket{{UpperBound: 0, Count: total - failed}, {UpperBound: math.Inf(1), Count: total}}, failed
}

// stateAt is the state a view must show at now; reportAt is the time of
// the newest report of the track's source (zero if none).
func (t *track) stateAt(now time.Time, cfg StoreConfig, reportAt time.Time) State {
	if t.state != Error {
		return t.freshness(now, cfg, t.lastAt, t.state)
	}
	if !t.failureOver(reportAt) {
		return Error
	}
	// The failure is over, but no news came since: what the track held
	// before it, as old as its last data (never observed: no data, as the
	// source's queries now answer).
	if t.dataAt.IsZero() {
		return NoData
	}
	return t.freshness(now, cfg, t.dataAt, t.beforeErr)
}

// failureOver reports whether the track's failure is older than its
// source's newest report, reportAt. A source that names its interval sends
// the failures of a refresh at or after that refresh's report's time, so
// a failure older than the report is one the refresh did not repeat: an
// earlier request's, not news of now (a histogram window may take a step
// and the store's lag to come after a store recovers).
func (t *track) failureOver(reportAt time.Time) bool {
	return t.state == Error && reportAt.After(t.errAt)
}

// errText is the track's error as of a report of its source at reportAt:
// "" once the failure is over.
func (t *track) errText(reportAt time.Time) string {
	if t.failureOver(reportAt) {
		return ""
	}
	return t.err
}

// freshness is state, or Stale when the last observation, at, is older
// than the track allows (Unknown if never).
func (t *track) freshness(now time.Time, cfg StoreConfig, at time.Time, state State) State {
	if at.IsZero() {
		return Unknown
	}
	if now.Sub(at) > t.staleAfter(cfg) {
		return Stale
	}
	return state
}

func (t *track) staleAfter(cfg StoreConfig) time.Duration {
	return cfg.SilentAfter(t.interval)
}
