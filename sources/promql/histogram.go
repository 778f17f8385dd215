package promql

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/telemetry"
)

// cumPoint is one endpoint's cumulative histogram at one step.
type cumPoint struct {
	t         time.Time // server time
	buckets   []telemetry.Bucket
	sum       float64
	series    float64 // number of series summed, when the query says
	hasSeries bool
	plain     float64 // a series without le: a value (custom quantile query)
	hasPlain  bool
}

// cumKey indexes the last point of each endpoint and signal, the baseline
// of the next window.
type cumKey struct {
	endpoint string
	signal   telemetry.Signal
}

// addSeries adds one series' cumulative points (a bucket, the _sum or the
// series count, in seconds) to every endpoint it applies to.
func addSeries(points map[*endpointState]map[model.Time]*cumPoint, eps []*endpointState, ss *model.SampleStream) error {
	kind, bound, err := seriesPart(ss.Metric)
	if err != nil {
		return err
	}
	scale := seriesScale(ss.Metric)
	for _, e := range eps {
		byT := points[e]
		if byT == nil {
			byT = map[model.Time]*cumPoint{}
			points[e] = byT
		}
		for _, sp := range ss.Values {
			p := byT[sp.Timestamp]
			if p == nil {
				p = &cumPoint{t: sp.Timestamp.Time()}
				byT[sp.Timestamp] = p
			}
			p.addValue(kind, bound*scale, float64(sp.Value)*sumScale(kind, scale))
		}
	}
	return nil
}

// histogram maps a range answer of a distribution signal. Per endpoint,
// consecutive steps are differenced into a KindHistogram (cumulative
// buckets of the window, Value = its _sum increase), so ttftop's store
// computes quantiles and SLO ratios over its own windows with the same
// maths as for a direct scrape. Points after the endpoint's final time
// (finalAt) wait for a later refresh; points before its frontier were
// handled already. It returns true when the steps were fetched.
func (rd *round) histogram(a answer) bool {
	sig := a.signal
	if !rd.outcome(a, string(sig)) {
		return false
	}
	mat, ok := a.value.(model.Matrix)
	if !ok {
		msg := fmt.Sprintf("query returned a %s, want a range vector", valueType(a.value))
		rd.failed = append(rd.failed, string(sig)+": "+msg)
		rd.failedSig[sig] = msg
		return false
	}
	points := map[*endpointState]map[model.Time]*cumPoint{}
	for _, ss := range mat {
		if err := addSeries(points, rd.reg.resolve(ss.Metric, true), ss); err != nil {
			rd.warn(fmt.Sprintf("%s: %v", sig, err))
		}
	}
	st := &rd.s.state
	R := rd.s.cfg.HistogramStep
	for _, e := range rd.reg.all() {
		key := cumKey{e.info.Name, sig}
		final := rd.finalAt(e)
		for _, t := range sortedTimes(points[e]) {
			p := points[e][t]
			if p.t.After(final) {
				break // the store may not hold this step yet: fetched again later
			}
			if prev, ok := st.cum[key]; ok && !p.t.After(prev.t) {
				continue // fetched before, for an endpoint that lagged
			}
			rd.step(e, sig, p)
		}
		// No data only for a final step within this range, once: a step that
		// may still fill is not judged.
		judge := alignDown(final, R)
		if rd.stopped(e) {
			// Its steps after its newest sample will not fill (on
			// VictoriaMetrics they repeat it): no data up to the round's end.
			judge = alignDown(rd.lag.end, R)
		}
		if !rd.reg.appliesHist(e, sig) || judge.Before(a.rng.Start) || !judge.After(st.judged[key]) {
			continue
		}
		if prev, ok := st.cum[key]; ok && !prev.t.Before(judge) {
			continue
		}
		st.judged[key] = judge
		if rd.stopped(e) {
			// Dated by its newest sample, as every refresh dates it
			// (stoppedDistributions): a no data as of each new step
			// would make its figures fresh again for a step, its
			// objectives flip between unknown and no data every step.
			rd.add(rd.noValue(e, sig, rd.s.localEval(judge)))
			continue
		}
		rd.add(telemetry.Observation{Kind: telemetry.KindNoData, At: rd.s.localEval(judge),
			Endpoint: e.info.Name, Signal: sig, Interval: R + rd.lagAllowance(e)})
	}
	return true
}

// step handles one endpoint's point: a plain value is emitted as is; a
// histogram is differenced against the previous step's point. Either way the
// point becomes the endpoint's frontier, unless it held nothing usable.
func (rd *round) step(e *endpointState, sig telemetry.Signal, p *cumPoint) {
	at := rd.s.localEval(p.t)
	R := rd.s.cfg.HistogramStep
	interval := R + rd.lagAllowance(e)
	key := cumKey{e.info.Name, sig}
	if len(p.buckets) == 0 {
		if !p.hasPlain || math.IsInf(p.plain, 0) {
			return
		}
		rd.ownHistogram(e, sig)
		rd.s.state.cum[key] = *p
		rd.add(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: e.info.Name, Signal: sig, Value: p.plain, Interval: interval})
		return
	}
	sortBuckets(p)
	if !math.IsInf(p.buckets[len(p.buckets)-1].UpperBound, 1) {
		rd.warn(fmt.Sprintf("%s: histogram of %s has no +Inf bucket; skipped", sig, e.info.Name))
		delete(rd.s.state.cum, key)
		return
	}
	prev, ok := rd.s.state.cum[key]
	rd.s.state.cum[key] = *p
	if !ok || len(prev.buckets) == 0 {
		return // a baseline: the first point
	}
	// After a gap (steps that came back without a point: a failed scrape,
	// a step judged before it filled), the difference with the point
	// before the gap still holds the gap's observations: they cannot be
	// told apart by step, so all go to this step, as increase() over the
	// range covering the gap counts them. A new baseline here dropped them
	// from every figure, unsaid.
	buckets, sum, why := diff(prev, *p)
	if why == "" && prev.t.Before(p.t.Add(-R)) && rd.restartedSince(e, prev.t) {
		// A restart in the gap that no bucket shows going down: the new
		// life's counts minus the old life's are no count at all.
		why = "restart in a gap"
	}
	if why == counterReset {
		rd.restart(e, p.t, prev.t, counterReset) // restarts.go
	}
	if why != "" {
		rd.warn(fmt.Sprintf("%s: %s for %s; one window skipped", sig, why, e.info.Name))
		return
	}
	rd.ownHistogram(e, sig)
	rd.add(telemetry.Observation{Kind: telemetry.KindHistogram, At: at, Endpoint: e.info.Name, Signal: sig,
		Value: sum, Interval: interval, Buckets: buckets})
}

// restartedSince reports whether e (a model row: one of its replicas) is
// known to have begun a new life after at (restarts.go).
func (rd *round) restartedSince(e *endpointState, at time.Time) bool {
	for _, x := range append([]*endpointState{e}, e.members...) {
		if since, ok := rd.s.state.ages.restartedAt(x.info.Name); ok && since.After(at) {
			return true
		}
	}
	return false
}

// ownHistogram notes that e's engine has its own figure of sig (no longer
// derived).
func (rd *round) ownHistogram(e *endpointState, sig telemetry.Signal) {
	e.seenHist[sig] = true
	rd.reg.clearDerived(e, sig)
}

// counterReset is diff's reason when a bucket count went down: the engine
// restarted between the two steps.
const counterReset = "counter reset"

// diff returns the observations between two cumulative points, or why it
// cannot: a counter reset (a bucket went down) or a change in the set of
// series summed (a pod came or went), either of which would corrupt a sum.
func diff(prev, cur cumPoint) ([]telemetry.Bucket, float64, string) {
	if prev.hasSeries && cur.hasSeries && prev.series != cur.series {
		return nil, 0, "set of series changed"
	}
	if len(prev.buckets) != len(cur.buckets) {
		return nil, 0, "bucket layout changed"
	}
	out := make([]telemetry.Bucket, len(cur.buckets))
	for i, c := range cur.buckets {
		if prev.buckets[i].UpperBound != c.UpperBound {
			return nil, 0, "bucket layout changed"
		}
		d := c.Count - prev.buckets[i].Count
		if d < 0 {
			return nil, 0, counterReset
		}
		out[i] = telemetry.Bucket{UpperBound: c.UpperBound, Count: d}
	}
	return out, max(cur.sum-prev.sum, 0), ""
}

type partKind uint8

const (
	partBucket partKind = iota
	partSum
	partSeries
	partPlain
)

// seriesPart says what a histogram-query series carries.
func seriesPart(m model.Metric) (partKind, float64, error) {
	switch m[partTag] {
	case "sum":
		return partSum, 0, nil
	case "series":
		return partSeries, 0, nil
	}
	le, ok := m[model.BucketLabel]
	if !ok {
		return partPlain, 0, nil
	}
	b, err := strconv.ParseFloat(string(le), 64)
	if err != nil || math.IsNaN(b) {
		return 0, 0, fmt.Errorf("series with an invalid le label skipped")
	}
	return partBucket, b, nil
}

// seriesScale is the factor of ttftop_scale (ms or µs histograms to
// seconds), 1 without it.
func seriesScale(m model.Metric) float64 {
	if v, ok := m[scaleTag]; ok {
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f > 0 && !math.IsInf(f, 0) {
			return f
		}
	}
	return 1
}

// sumScale is what scales a part's value: the _sum is in the histogram's
// unit, counts are counts.
func sumScale(kind partKind, scale float64) float64 {
	if kind == partSum {
		return scale
	}
	return 1
}

func (p *cumPoint) addValue(kind partKind, bound, v float64) {
	if math.IsNaN(v) {
		return
	}
	switch kind {
	case partSum:
		p.sum += v
	case partSeries:
		p.series += v
		p.hasSeries = true
	case partPlain:
		p.plain, p.hasPlain = v, true
	case partBucket:
		// le="5" and le="5.0" (Prometheus 3 normalisation) are one bucket.
		for i := range p.buckets {
			if p.buckets[i].UpperBound == bound {
				p.buckets[i].Count += v
				return
			}
		}
		p.buckets = append(p.buckets, telemetry.Bucket{UpperBound: bound, Count: v})
	}
}

func sortedTimes(m map[model.Time]*cumPoint) []model.Time {
	out := make([]model.Time, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
