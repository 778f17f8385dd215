package telemetry

import (
	"math"
	"sort"
	"time"
)

// Snapshot is the read-out every view shares: the TUI, `tokentop snapshot`
// JSON and the exporter.
type Snapshot struct {
	At        time.Time          `json:"at"`
	Window    time.Duration      `json:"-"`
	Endpoints []EndpointSnapshot `json:"endpoints"`
	Sources   []SourceStatus     `json:"sources"`
}

// EndpointSnapshot is one endpoint and every signal known for it.
type EndpointSnapshot struct {
	Endpoint
	Signals map[Signal]SignalSnapshot `json:"signals"`
}

// SignalSnapshot is one signal's figure over the window, with its
// provenance. Quantiles or Value are nil when unknown: never zero.
type SignalSnapshot struct {
	Unit       string    `json:"unit"`
	P50        *float64  `json:"p50,omitempty"`
	P90        *float64  `json:"p90,omitempty"`
	P95        *float64  `json:"p95,omitempty"`
	P99        *float64  `json:"p99,omitempty"`
	Value      *float64  `json:"value,omitempty"`
	Count      float64   `json:"count,omitempty"`
	Source     string    `json:"source"`
	State      State     `json:"state"`
	ObservedAt time.Time `json:"observed_at,omitzero"`
	Err        string    `json:"error,omitempty"`
	Approx     bool      `json:"approx,omitempty"`
}

// Age is how old the figure is at now.
func (s SignalSnapshot) Age(now time.Time) time.Duration {
	if s.ObservedAt.IsZero() {
		return 0
	}
	return now.Sub(s.ObservedAt)
}

// Snapshot reads every endpoint at now over window.
func (s *Store) Snapshot(now time.Time, window time.Duration) Snapshot {
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap := Snapshot{At: now, Window: window, Endpoints: make([]EndpointSnapshot, 0, len(s.endpoints))}
	for _, ep := range s.endpoints {
		snap.Endpoints = append(snap.Endpoints, s.endpointSnapshot(ep, now, window))
	}
	sort.Slice(snap.Endpoints, func(i, j int) bool { return snap.Endpoints[i].Name < snap.Endpoints[j].Name })
	snap.Sources = make([]SourceStatus, 0, len(s.sources))
	for _, st := range s.sources {
		snap.Sources = append(snap.Sources, st)
	}
	sort.Slice(snap.Sources, func(i, j int) bool { return snap.Sources[i].Name < snap.Sources[j].Name })
	return snap
}

// Signal reads one signal of one endpoint; ok is false when unknown.
func (s *Store) Signal(endpoint string, sig Signal, now time.Time, window time.Duration) (SignalSnapshot, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return SignalSnapshot{}, false
	}
	if t := s.preferred(ep, sig, now); t != nil {
		return s.signalSnapshot(t, now, window), true
	}
	if sig == ErrorRate {
		return s.derivedErrorRate(ep, now, window)
	}
	return SignalSnapshot{}, false
}

func (s *Store) endpointSnapshot(ep *endpointState, now time.Time, window time.Duration) EndpointSnapshot {
	es := EndpointSnapshot{Endpoint: ep.info, Signals: map[Signal]SignalSnapshot{}}
	if es.Engine == "" {
		es.Engine = EngineUnknown
	}
	for _, sig := range Signals {
		if t := s.preferred(ep, sig, now); t != nil {
			es.Signals[sig] = s.signalSnapshot(t, now, window)
		}
	}
	// Tracks of signals outside the standard list (e.g. GPU memory used).
	for k, t := range ep.tracks {
		if _, std := signalInfo[k.signal]; !std {
			if _, done := es.Signals[k.signal]; !done {
				es.Signals[k.signal] = s.signalSnapshot(t, now, window)
			}
		}
	}
	if _, ok := es.Signals[ErrorRate]; !ok {
		if er, ok := s.derivedErrorRate(ep, now, window); ok {
			es.Signals[ErrorRate] = er
		}
	}
	return es
}

// preferred picks, among the tracks feeding sig, the first live one in the
// configured source order, else the first with any data.
func (s *Store) preferred(ep *endpointState, sig Signal, now time.Time) *track {
	var fallback *track
	try := func(t *track) bool {
		st := t.stateAt(now, s.cfg)
		if st == Live {
			return true
		}
		if fallback == nil && st != Unknown {
			fallback = t
		}
		return false
	}
	for _, kind := range s.cfg.Prefer {
		if t, ok := ep.tracks[trackKey{sig, kind}]; ok && try(t) {
			return t
		}
	}
	for k, t := range ep.tracks {
		if k.signal == sig && !s.preferredKind(k.sourceKind) && try(t) {
			return t
		}
	}
	return fallback
}

func (s *Store) preferredKind(kind string) bool {
	for _, k := range s.cfg.Prefer {
		if k == kind {
			return true
		}
	}
	return false
}

func (s *Store) signalSnapshot(t *track, now time.Time, window time.Duration) SignalSnapshot {
	info := t.signal.Info()
	out := SignalSnapshot{Unit: info.Unit, Source: t.source, State: t.stateAt(now, s.cfg), Err: t.err, Approx: t.approx}
	if t.hasValue {
		out.ObservedAt = t.lastGoodAt
	} else {
		out.ObservedAt = t.lastAt
	}
	scale := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		x := v * info.Scale
		return &x
	}
	from := now.Add(-window)
	switch {
	case info.Distribution:
		q := s.quantilesLocked(t, from, now)
		if q.count == 0 && out.State != Live {
			// Nothing in the window: show the last known figures, whose
			// state (stale, error) and age say they are old.
			q = s.quantilesLocked(t, now.Add(-s.cfg.MaxWindow), now)
		} else if q.count == 0 && out.State == Live {
			out.State = NoData
		}
		if q.count > 0 {
			out.P50, out.P90, out.P95, out.P99 = scale(q.p[0]), scale(q.p[1]), scale(q.p[2]), scale(q.p[3])
			out.Count = q.count
		}
	case t.samples != nil:
		vals := t.samples.since(from, now)
		if len(vals) > 0 {
			out.Value, out.Count = scale(mean(vals)), float64(len(vals))
		} else if t.hasValue {
			out.Value = scale(t.last)
		}
	case t.hasValue:
		out.Value = scale(t.last)
	}
	return out
}

type quantiles struct {
	p     [4]float64
	count float64
}

var reportedQuantiles = [4]float64{0.5, 0.9, 0.95, 0.99}

func (s *Store) quantilesLocked(t *track, from, to time.Time) quantiles {
	var q quantiles
	if t.samples != nil {
		if vals := t.samples.since(from, to); len(vals) > 0 {
			for i, p := range reportedQuantiles {
				q.p[i] = SampleQuantile(p, vals)
			}
			q.count = float64(len(vals))
			return q
		}
	}
	if t.hist != nil {
		b, _ := t.hist.window(from, to)
		if len(b) > 0 && b[len(b)-1].Count > 0 {
			for i, p := range reportedQuantiles {
				q.p[i] = HistogramQuantile(p, b)
			}
			q.count = b[len(b)-1].Count
		}
	}
	return q
}

// derivedErrorRate is failed probes / all probes in the window, for
// endpoints whose sources report no error rate of their own.
func (s *Store) derivedErrorRate(ep *endpointState, now time.Time, window time.Duration) (SignalSnapshot, bool) {
	t, ok := ep.tracks[trackKey{ProbeSuccess, "probe"}]
	if !ok || t.samples == nil {
		return SignalSnapshot{}, false
	}
	vals := t.samples.since(now.Add(-window), now)
	out := SignalSnapshot{Unit: ErrorRate.Info().Unit, Source: t.source, State: t.stateAt(now, s.cfg), ObservedAt: t.lastAt}
	if out.State == Error {
		out.State = Live // a failed probe is data for the error rate
	}
	if len(vals) == 0 {
		if out.State == Live {
			out.State = NoData
		}
		return out, true
	}
	failed := 0.0
	for _, v := range vals {
		if v < 0.5 {
			failed++
		}
	}
	r := failed / float64(len(vals)) * ErrorRate.Info().Scale
	out.Value, out.Count = &r, float64(len(vals))
	return out, true
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
