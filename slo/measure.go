package slo

import (
	"math"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// measurement is one objective read on one endpoint at one instant, before
// the alert state machine decides what it means.
type measurement struct {
	data   telemetry.State
	reason string
	// value is the judged figure in base units (Ratio: the burn rate of
	// the deciding window pair), NaN when there is none; threshold is what
	// it is compared with (Ratio: that pair's factor).
	value, threshold float64
	breach           bool
	// recovered (availability): the newest probe succeeded. A breach then
	// keeps an active alert but starts none: after a short outage the
	// window's share of failures can rise as healthy probes leave it
	// (3 of 6 → 3 of 5), which is no news of an endpoint now answering.
	recovered bool
	// newestAt (availability) is when the newest probe in the window
	// ended: an alert starts only at the evaluation a failed probe
	// arrives in, not when a healthy one leaves the window (3 of 6 → 3 of 5).
	newestAt   time.Time
	count      float64
	approx     bool
	source     telemetry.SourceKind
	burn       []BurnRate
	budget     *float64
	budgetSpan time.Duration
	// goodRatio is the share of good events over the period (Ratio), for
	// `ttftop check`; NaN when there were none.
	goodRatio float64
	// never: the endpoint's sources can never give the signal (reason
	// says why): unmeasurable, not "no data yet".
	never bool
}

// judgeable is true when the state machine may act on breach: fresh data
// with a figure. Anything else is no data or unknown, never "OK".
func (m measurement) judgeable() bool {
	return m.data == telemetry.Live && !math.IsNaN(m.value)
}

func (e *Engine) measure(r *rule, now time.Time) measurement {
	m := e.measureKind(r, now)
	if !m.judgeable() && e.store != nil {
		// The store knows why there is nothing to judge: say it, not
		// only "data stale".
		if h, ok := e.store.Target(r.endpoint); ok {
			m.reason = "target " + h.State + " since " + h.Since.UTC().Format(time.TimeOnly) + " UTC: " + h.Reason
		}
	}
	return m
}

func (e *Engine) measureKind(r *rule, now time.Time) measurement {
	o := &e.objs[r.obj]
	if o.Kind != Availability && e.store != nil {
		if why, never := e.store.Unmeasurable(r.endpoint, o.Signal); never {
			return measurement{data: telemetry.Unknown, reason: why, never: true, value: math.NaN(),
				threshold: o.Threshold, goodRatio: math.NaN()}
		}
	}
	switch o.Kind {
	case Percentile:
		return e.measurePercentile(o, r.endpoint, now)
	case ErrorRate, Availability:
		return e.measureErrorRate(o, r.endpoint, now)
	case Ratio:
		return e.measureRatio(o, r.pairs, r.events, now)
	case TargetUp:
		return e.measureTargetUp(o, r, now)
	}
	return measurement{data: telemetry.Unknown, value: math.NaN(), goodRatio: math.NaN()}
}

// signalMeasurement starts a threshold measurement from the signal's
// snapshot over the objective's window; ok is false (with the reason in
// m) when there is nothing to measure.
func (e *Engine) signalMeasurement(o *Objective, endpoint string, now time.Time) (m measurement, snap telemetry.SignalSnapshot, ok bool) {
	m = measurement{data: telemetry.Unknown, value: math.NaN(), threshold: o.Threshold, goodRatio: math.NaN()}
	if e.store == nil {
		m.reason = "no telemetry store"
		return m, snap, false
	}
	read := e.store.Signal
	if o.Kind == Availability {
		read = e.store.ClientSignal
	}
	if snap, ok = read(endpoint, o.Signal, now, o.Window); !ok {
		m.reason = "never observed"
		return m, snap, false
	}
	m.data, m.reason, m.source = snap.State, snap.Err, telemetry.SourceKindOf(snap.Source)
	return m, snap, true
}

func (e *Engine) measurePercentile(o *Objective, endpoint string, now time.Time) measurement {
	m, snap, ok := e.signalMeasurement(o, endpoint, now)
	if !ok {
		return m
	}
	// Histogram quantiles are interpolated inside a bucket: approximate.
	m.approx = snap.Approx || m.source == telemetry.SourceScrape || m.source == telemetry.SourcePromQL
	if v, n := e.store.Quantile(endpoint, o.Signal, o.Percentile, now, o.Window); n > 0 && !math.IsNaN(v) {
		m.value, m.count = v, n
	} else if m.data == telemetry.Live {
		m.data = telemetry.NoData
	}
	m.breach = m.value > o.Threshold
	return m
}

func (e *Engine) measureErrorRate(o *Objective, endpoint string, now time.Time) measurement {
	m, snap, ok := e.signalMeasurement(o, endpoint, now)
	if !ok {
		return m
	}
	m.approx = snap.Approx
	if snap.Value != nil {
		// Snapshots are in display units (percent); objectives in ratios.
		m.value, m.count = *snap.Value/o.Signal.Info().Scale, snap.Count
	} else if m.data == telemetry.Live {
		m.data = telemetry.NoData
	}
	m.breach = m.value > o.Threshold
	if o.Kind == Availability {
		m.recovered, m.newestAt = !snap.NewestFailed, snap.ObservedAt
	}
	return m
}

// measureRatio applies the multiwindow, multi-burn-rate rules of one
// severity: a pair breaches when the burn rate over both its long and short
// windows exceeds its factor (SRE workbook ch. 5); any breaching pair
// breaches. A window with no events has no burn rate (0/0 is no data,
// not good): the pair cannot breach, as NaN > x is false in PromQL.
func (e *Engine) measureRatio(o *Objective, pairs []BurnWindow, ev *events, now time.Time) measurement {
	m := measurement{data: telemetry.Unknown, value: math.NaN(), threshold: math.NaN(), goodRatio: math.NaN()}
	c, kind := ev.pick(now, e.prefer, e.staleAfter)
	if c == nil {
		m.reason = "no events yet"
		return m
	}
	m.data, m.source = c.state(now, e.staleAfter(c.interval)), kind
	if m.data == telemetry.Error {
		m.reason = c.err
	}
	budget := budgetOf(o.Target)
	rate := func(w time.Duration) (float64, bool) {
		good, total, ok := c.sum(now, w)
		if !ok || total <= 0 {
			return 0, false
		}
		return (1 - good/total) / budget, true
	}
	bestScore := math.Inf(-1)
	for _, bw := range pairs {
		long, okL := rate(bw.Long)
		short, okS := rate(bw.Short)
		if okL {
			m.burn = append(m.burn, BurnRate{Window: bw.Long, Rate: long, Factor: bw.Factor})
		}
		if okS {
			m.burn = append(m.burn, BurnRate{Window: bw.Short, Rate: short, Factor: bw.Factor})
		}
		if !okL || !okS {
			continue
		}
		eff := min(long, short)
		breach, score := eff > bw.Factor, eff/bw.Factor
		// The deciding pair is the breaching one with the highest factor
		// (the fastest burn), else the pair closest to its threshold.
		switch {
		case breach && (!m.breach || bw.Factor > m.threshold):
		case !breach && !m.breach && score > bestScore:
		default:
			continue
		}
		m.value, m.threshold, m.breach, bestScore = eff, bw.Factor, breach, score
	}
	if good, total, ok := c.sum(now, o.Period); ok && total > 0 {
		m.goodRatio, m.count = good/total, total
		rem := 1 - (1-good/total)/budget
		m.budget = &rem
		m.budgetSpan = min(now.Sub(c.firstAt), o.Period)
	}
	if m.data == telemetry.Live && math.IsNaN(m.value) {
		m.data, m.reason = telemetry.NoData, "no events in the burn windows"
	}
	m.approx = !c.approxAt.IsZero() && now.Sub(c.approxAt) < o.Period
	return m
}

// measureTargetUp reads the share of the endpoint's targets up (a replica
// or scraped endpoint: 1 or 0): the rule breaches below all of them, or,
// noneUp, when none is.
func (e *Engine) measureTargetUp(o *Objective, r *rule, now time.Time) measurement {
	m, snap, ok := e.signalMeasurement(o, r.endpoint, now)
	if !ok {
		return m
	}
	m.threshold = r.alert.Threshold
	if snap.Value != nil {
		m.value, m.count = *snap.Value/o.Signal.Info().Scale, 1
	} else if m.data == telemetry.Live {
		m.data = telemetry.NoData
	}
	if r.noneUp {
		m.breach = m.value <= 0
	} else {
		m.breach = m.value < 1
	}
	return m
}
