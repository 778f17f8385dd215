package slo

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// maxSourceKinds bounds the counters of one ratio objective: one per kind
// of source (probe, scrape, promql…), never one per URL.
const maxSourceKinds = 4

// events are the good/total counters of one Ratio objective on one
// endpoint, one set per source kind: a probe's client-side events and a
// scrape's server-side histogram are different populations and are never
// added together (as the store keeps their tracks apart).
type events struct {
	windows []time.Duration
	byKind  map[telemetry.SourceKind]*counts
	// lastFailAt de-duplicates one failed probe reported twice (a
	// probe_success 0 sample and a failure at the same instant).
	lastFailAt time.Time
}

func newEvents(o Objective) *events {
	ws := []time.Duration{o.Period}
	for _, bw := range o.BurnWindows {
		ws = append(ws, bw.Long, bw.Short)
	}
	return &events{windows: ws, byKind: map[telemetry.SourceKind]*counts{}}
}

func (ev *events) counter(kind telemetry.SourceKind) *counts {
	c, ok := ev.byKind[kind]
	if !ok {
		if len(ev.byKind) >= maxSourceKinds {
			return nil
		}
		c = newCounts(ev.windows)
		ev.byKind[kind] = c
	}
	return c
}

// observe turns one observation into good and total events of objective o.
// A failed probe is a bad event for every ratio objective (the request did
// not get its answer in time: it did not get it at all); a failed scrape or
// query is not an event but a data error.
func (ev *events) observe(o telemetry.Observation, obj Objective) {
	kind := telemetry.SourceKindOf(o.Source)
	switch o.Kind {
	case telemetry.KindSample:
		switch {
		case o.Signal == telemetry.ProbeSuccess && o.Value < 0.5:
			ev.probeFailure(kind, o)
		case o.Signal == telemetry.ProbeSuccess && obj.Signal == telemetry.ProbeSuccess:
			ev.count(kind, o, 1, 1, o.Approx)
		case o.Signal == obj.Signal && !math.IsNaN(o.Value) && !math.IsInf(o.Value, 0):
			good := 0.0
			if o.Value <= obj.Threshold {
				good = 1
			}
			ev.count(kind, o, good, 1, o.Approx)
		}
	case telemetry.KindHistogram:
		if o.Signal != obj.Signal || obj.Signal == telemetry.ProbeSuccess {
			return
		}
		good, total, exact := telemetry.CountAtOrBelow(obj.Threshold, o.Buckets)
		switch {
		case math.IsNaN(total) || math.IsNaN(good):
			return // no +Inf bucket: not a histogram we can read
		case total <= 0:
			// The source answered and nothing happened: alive, no events.
			if c := ev.counter(kind); c != nil {
				c.seen(o.At, o.Interval)
			}
			return
		}
		ev.count(kind, o, good, total, !exact || o.Approx)
	case telemetry.KindFailure:
		if o.Signal != "" && o.Signal != obj.Signal && o.Signal != telemetry.ProbeSuccess {
			return
		}
		if kind == telemetry.SourceProbe {
			ev.probeFailure(kind, o)
			return
		}
		if c := ev.counter(kind); c != nil {
			c.seen(o.At, o.Interval)
			c.errAt, c.err = o.At, o.Err
		}
	case telemetry.KindNoData:
		if o.Signal == "" || o.Signal == obj.Signal {
			if c := ev.counter(kind); c != nil {
				c.seen(o.At, o.Interval)
				c.noDataAt = o.At
			}
		}
	}
}

func (ev *events) probeFailure(kind telemetry.SourceKind, o telemetry.Observation) {
	if o.At.Equal(ev.lastFailAt) {
		return
	}
	ev.lastFailAt = o.At
	ev.count(kind, o, 0, 1, false)
}

func (ev *events) count(kind telemetry.SourceKind, o telemetry.Observation, good, total float64, approx bool) {
	c := ev.counter(kind)
	if c == nil {
		return
	}
	c.seen(o.At, o.Interval)
	c.add(o.At, good, total)
	if approx {
		c.approxAt = o.At
	}
}

// pick chooses the counter to judge by: on its side, the first live one in the store's
// source preference, else the first with anything at all, so the figure
// follows the same source as the percentile views.
func (ev *events) pick(now time.Time, prefer []telemetry.SourceKind, staleAfter func(time.Duration) time.Duration) (*counts, telemetry.SourceKind) {
	// Sides never stand in for each other: once probes count events, the
	// objective judges the client's, as the store's views do.
	side := telemetry.Server
	for k := range ev.byKind {
		if telemetry.SideOf(k) == telemetry.Client {
			side = telemetry.Client
		}
	}
	kinds := make([]telemetry.SourceKind, 0, len(ev.byKind))
	for k := range ev.byKind {
		if telemetry.SideOf(k) == side {
			kinds = append(kinds, k)
		}
	}
	rank := func(k telemetry.SourceKind) int {
		if i := slices.Index(prefer, k); i >= 0 {
			return i
		}
		return len(prefer)
	}
	slices.SortFunc(kinds, func(a, b telemetry.SourceKind) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(string(a), string(b))
	})
	for _, k := range kinds {
		if c := ev.byKind[k]; c.state(now, staleAfter(c.interval)) == telemetry.Live {
			return c, k
		}
	}
	for _, k := range kinds {
		if c := ev.byKind[k]; !c.lastAt.IsZero() {
			return c, k
		}
	}
	return nil, ""
}

// state is how far the counter can be trusted at now: an error when the
// last report was a failure, stale when nothing came for too long.
func (c *counts) state(now time.Time, staleAfter time.Duration) telemetry.State {
	switch {
	case c.lastAt.IsZero():
		return telemetry.Unknown
	case !c.errAt.IsZero() && !c.errAt.Before(c.lastAt):
		return telemetry.Error
	case now.Sub(c.lastAt) > staleAfter:
		return telemetry.Stale
	}
	return telemetry.Live
}
