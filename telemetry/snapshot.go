package telemetry

import (
	"math"
	"sort"
	"time"
)

// Snapshot is the read-out every view shares: the TUI, `ttftop snapshot`
// JSON and the exporter.
type Snapshot struct {
	At        time.Time          `json:"at"`
	Window    time.Duration      `json:"-"`
	Endpoints []EndpointSnapshot `json:"endpoints"`
	Sources   []SourceStatus     `json:"sources"`
	// GPUs are the devices GPU sources report, each with the endpoints
	// it is joined to.
	GPUs []GPUDevice `json:"gpus,omitempty"`
}

// EndpointSnapshot is one endpoint and every signal known for it.
//
// Signals holds the figure a user reads first: for an endpoint ttftop
// probes, the client's (probe) figures of the signals a probe measures,
// in whatever state they are — a failing probe shows as an error, never
// as the engine's value in its place; for everything else, the server's.
// Server holds the engine's own figures (scrape, PromQL) of the signals
// whose Signals entry is the client's, so both are there, each with its
// source.
type EndpointSnapshot struct {
	Endpoint
	Signals SignalMap `json:"signals"`
	Server  SignalMap `json:"server,omitempty"`
}

// SignalSnapshot is one signal's figure over the window, with its
// provenance. Quantiles or Value are nil when unknown: never zero.
type SignalSnapshot struct {
	Unit string   `json:"unit"`
	P50  *float64 `json:"p50,omitempty"`
	P90  *float64 `json:"p90,omitempty"`
	P95  *float64 `json:"p95,omitempty"`
	P99  *float64 `json:"p99,omitempty"`
	// P50Bound … P99Bound mark a histogram quantile that is only a
	// bucket edge (HistogramQuantileBound): "upper" reads "p50 ≤ P50"
	// (the rank is in the lowest bucket), "lower" "p50 ≥ P50" (in +Inf).
	P50Bound Bound `json:"p50_bound,omitempty"`
	P90Bound Bound `json:"p90_bound,omitempty"`
	P95Bound Bound `json:"p95_bound,omitempty"`
	P99Bound Bound `json:"p99_bound,omitempty"`
	// Mean is a histogram's sum / count over the window, where the
	// source gives the sum: exact where the quantiles are only bounds.
	Mean       *float64  `json:"mean,omitempty"`
	Value      *float64  `json:"value,omitempty"`
	Count      float64   `json:"count,omitempty"`
	Source     string    `json:"source"`
	State      State     `json:"state"`
	ObservedAt time.Time `json:"observed_at,omitzero"`
	Err        string    `json:"error,omitempty"`
	Approx     bool      `json:"approx,omitempty"`
	// NewestFailed (the probes' error rate): the newest probe in the
	// window failed. An availability alert starts only then, so that the
	// window's count moving after a recovery does not page.
	NewestFailed bool `json:"newest_failed,omitempty"`

	// DataSince is set when the data held begin inside the window (the
	// history is shorter than the window): the figures cover only since
	// then.
	DataSince time.Time `json:"data_since,omitzero"`
	// Young marks a counter's rate over a series younger than the rate's
	// window, which reads low (never a ratio: ReadsLowWhenYoung);
	// SeriesAgeS is the series' age (seconds) at ObservedAt.
	Young      bool    `json:"young,omitempty"`
	SeriesAgeS float64 `json:"series_age_s,omitempty"`
	// RateWindowS is the span (seconds) a rate or ratio value is taken
	// over when that is not the viewed window: a PromQL source's rate()
	// window, a direct scrape's time between two scrapes.
	RateWindowS float64 `json:"rate_window_s,omitempty"`
	// Shared is set on GPU power and energy per token when the GPUs are
	// shared with other endpoints: power is the GPUs' (a host's) whole
	// draw, energy per token theirs over all those endpoints' tokens.
	Shared *GPUShare `json:"shared,omitempty"`
}

// RateWindow is the span a rate or ratio figure is taken over when that is
// not the viewed window, and what sets it: "PromQL window" (the source's
// rate() range) or "scrape window" (the span of a direct scrape's recent
// scrapes). A span of 2 s or more is given to the whole second below, so
// that a label does not change with every scrape's jitter (10.237s). ok
// is false when the figure names none.
func (s SignalSnapshot) RateWindow() (d time.Duration, what string, ok bool) {
	if s.RateWindowS <= 0 {
		return 0, "", false
	}
	d = time.Duration(math.Round(s.RateWindowS*1000)) * time.Millisecond
	if d >= 2*time.Second {
		d = d.Truncate(time.Second)
	}
	if SourceKindOf(s.Source) == SourcePromQL {
		return d, "PromQL window", true
	}
	return d, "scrape window", true
}

// Percentile is the shown p-th percentile (50, 90, 95 or 99) and its
// bound; nil when unknown or not one of those.
func (s SignalSnapshot) Percentile(p int) (*float64, Bound) {
	switch p {
	case 50:
		return s.P50, s.P50Bound
	case 90:
		return s.P90, s.P90Bound
	case 95:
		return s.P95, s.P95Bound
	case 99:
		return s.P99, s.P99Bound
	}
	return nil, NotBound
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
	sharing := s.newGPUShares(now)
	for _, ep := range s.endpoints {
		snap.Endpoints = append(snap.Endpoints, s.endpointSnapshot(ep, now, window, sharing))
	}
	sort.Slice(snap.Endpoints, func(i, j int) bool { return snap.Endpoints[i].Name < snap.Endpoints[j].Name })
	snap.Sources = make([]SourceStatus, 0, len(s.sources))
	for _, r := range s.sources {
		snap.Sources = append(snap.Sources, r.statusAt(now, s.cfg))
	}
	sort.Slice(snap.Sources, func(i, j int) bool { return snap.Sources[i].Name < snap.Sources[j].Name })
	snap.GPUs = s.gpuSnapshot(now)
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
	return s.primarySnapshot(ep, sig, now, window)
}

// ServerSignal reads the engine's own figure of a signal (scrape, PromQL,
// GPU sources), whatever the client's is; ok is false when unknown.
func (s *Store) ServerSignal(endpoint string, sig Signal, now time.Time, window time.Duration) (SignalSnapshot, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return SignalSnapshot{}, false
	}
	if t := s.preferred(ep, sig, Server, now); t != nil {
		return s.signalSnapshot(t, now, window), true
	}
	return SignalSnapshot{}, false
}

// ClientSignal reads the client's (probe) figure of a signal; ok is false
// when the endpoint is not probed or probes do not measure sig.
func (s *Store) ClientSignal(endpoint string, sig Signal, now time.Time, window time.Duration) (SignalSnapshot, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok || !ep.probed() || !ClientSignal(sig) {
		return SignalSnapshot{}, false
	}
	return s.clientSnapshot(ep, sig, now, window), true
}

// Has reports whether the endpoint has a figure of sig from any source.
func (s *Store) Has(endpoint string, sig Signal) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return false
	}
	for k := range ep.tracks {
		if k.signal == sig {
			return true
		}
	}
	return false
}

// Target reads the endpoint's target health label (Endpoint.Target).
func (s *Store) Target(endpoint string) (TargetHealth, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	if !ok {
		return TargetHealth{}, false
	}
	return ep.info.Target()
}

// Probed reports whether ttftop's own probes feed the endpoint.
func (s *Store) Probed(endpoint string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, ok := s.endpoints[endpoint]
	return ok && ep.probed()
}

// primarySnapshot is the figure of sig a view shows first (see
// EndpointSnapshot): the client's on a probed endpoint, else the server's.
func (s *Store) primarySnapshot(ep *endpointState, sig Signal, now time.Time, window time.Duration) (SignalSnapshot, bool) {
	return s.primaryShared(ep, sig, now, window, s.newGPUShares(now))
}

// primaryShared is primarySnapshot with the snapshot's GPU sharing, which
// GPU power and energy per token read.
func (s *Store) primaryShared(ep *endpointState, sig Signal, now time.Time, window time.Duration, sharing *gpuShares) (SignalSnapshot, bool) {
	switch sig {
	case EnergyPerToken:
		return s.energyPerToken(ep, now, window, sharing)
	case GPUPower:
		t := s.preferred(ep, sig, Server, now)
		if t == nil {
			return SignalSnapshot{}, false
		}
		out := s.signalSnapshot(t, now, window)
		if sh, ok := sharing.of(ep.info.Name, t); ok {
			out.Shared = sh.public()
		}
		return out, true
	}
	if ep.probed() && ClientSignal(sig) {
		if _, judged := ep.tracks[trackKey{Goodput, SourceProbe}]; sig == Goodput && !judged {
			return SignalSnapshot{}, false // no latency objective to judge probes by
		}
		return s.clientSnapshot(ep, sig, now, window), true
	}
	if t := s.preferred(ep, sig, Server, now); t != nil {
		return s.signalSnapshot(t, now, window), true
	}
	return SignalSnapshot{}, false
}

// clientSnapshot is a probed endpoint's client figure of sig. Before the
// first successful probe there is no track: the figure is then the last
// probe's failure, or unknown.
func (s *Store) clientSnapshot(ep *endpointState, sig Signal, now time.Time, window time.Duration) SignalSnapshot {
	if sig == ErrorRate {
		return s.probeErrorRate(ep, now, window)
	}
	if t, ok := ep.tracks[trackKey{sig, SourceProbe}]; ok {
		return s.signalSnapshot(t, now, window)
	}
	out := SignalSnapshot{Unit: sig.Info().Unit, Source: ep.probeSource, State: Unknown, ObservedAt: ep.probeAt}
	if ep.probeErr != "" {
		out.State, out.Err = Error, ep.probeErr
	}
	return out
}

func (s *Store) endpointSnapshot(ep *endpointState, now time.Time, window time.Duration, sharing *gpuShares) EndpointSnapshot {
	es := EndpointSnapshot{Endpoint: ep.info, Signals: map[Signal]SignalSnapshot{}}
	if es.Engine == "" {
		es.Engine = EngineUnknown
	}
	probed := ep.probed()
	for _, sig := range Signals {
		if v, ok := s.primaryShared(ep, sig, now, window, sharing); ok {
			es.Signals[sig] = v
		}
		if !probed || !ClientSignal(sig) {
			continue
		}
		if t := s.preferred(ep, sig, Server, now); t != nil {
			if es.Server == nil {
				es.Server = map[Signal]SignalSnapshot{}
			}
			es.Server[sig] = s.signalSnapshot(t, now, window)
		}
	}
	// Tracks of signals outside the standard list (e.g. GPU memory used).
	for k, t := range ep.tracks {
		if _, std := signalInfo[k.signal]; !std && !IsEngineSignal(k.signal) {
			if _, done := es.Signals[k.signal]; !done {
				es.Signals[k.signal] = s.signalSnapshot(t, now, window)
			}
		}
	}
	return es
}

// preferred picks, among the tracks of one side feeding sig, the first
// live one in the configured source order, else the first with any data.
// Sides never stand in for each other: a failing probe is not replaced by
// the engine's figure.
func (s *Store) preferred(ep *endpointState, sig Signal, side Side, now time.Time) *track {
	var fallback *track
	try := func(t *track) bool {
		st := s.trackState(t, now)
		if st == Live {
			return true
		}
		if fallback == nil && st != Unknown {
			fallback = t
		}
		return false
	}
	for _, kind := range s.cfg.Prefer {
		if SideOf(kind) != side {
			continue
		}
		if t, ok := ep.tracks[trackKey{sig, kind}]; ok && try(t) {
			return t
		}
	}
	if !ep.unpreferred {
		return fallback // (ranging over every track, for each signal, was most of a fleet's snapshot)
	}
	for k, t := range ep.tracks {
		if k.signal == sig && SideOf(k.sourceKind) == side && !s.preferredKind(k.sourceKind) && try(t) {
			return t
		}
	}
	return fallback
}

func (s *Store) preferredKind(kind SourceKind) bool {
	for _, k := range s.cfg.Prefer {
		if k == kind {
			return true
		}
	}
	return false
}

func (s *Store) signalSnapshot(t *track, now time.Time, window time.Duration) SignalSnapshot {
	info := t.signal.Info()
	out := SignalSnapshot{Unit: info.Unit, Source: t.source, State: s.trackState(t, now), Err: s.trackErr(t), Approx: t.approx}
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
	if t.firstAt.After(from) {
		out.DataSince = t.firstAt
	}
	if t.seriesAge > 0 && ReadsLowWhenYoung(t.signal) {
		out.Young, out.SeriesAgeS = true, t.seriesAge.Seconds()
	}
	if t.rateWindow > 0 {
		out.RateWindowS = t.rateWindow.Seconds()
	}
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
			out.P50Bound, out.P90Bound, out.P95Bound, out.P99Bound = q.bound[0], q.bound[1], q.bound[2], q.bound[3]
			out.Count = q.count
			if q.hasSum {
				out.Mean = scale(q.sum / q.count)
			}
		}
	case t.hist != nil:
		// A failure-indicator histogram (see ErrorCounts): failed / all
		// requests over the window, the same maths as rate(failed[w]) /
		// rate(all[w]). A window without requests says so.
		if _, failed, total := t.hist.totals(from, now); total > 0 {
			r := min(failed/total, 1)
			out.Value, out.Count = scale(r), total
		} else if out.State == Live {
			out.State, out.Err = NoData, "no requests in "+window.String()
		}
	case t.signal == ProbeSuccess:
		// The last probe's 0 or 1, as defined and as the exporter's gauge
		// says: the window's share of failures is the error rate already.
		if t.hasValue {
			out.Value = scale(t.last)
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
	p      [4]float64
	bound  [4]Bound
	count  float64
	sum    float64
	hasSum bool // a histogram's sum is known (see quantilesLocked)
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
		b, sum := t.hist.window(from, to)
		if len(b) > 0 && b[len(b)-1].Count > 0 {
			for i, p := range reportedQuantiles {
				q.p[i], q.bound[i] = HistogramQuantileBound(p, b)
			}
			q.count = b[len(b)-1].Count
			// A latency sum of 0 over observations is a missing _sum (a
			// PromQL answer without the series), not a zero mean.
			q.sum, q.hasSum = sum, sum > 0 && !math.IsInf(sum, 0)
		}
	}
	return q
}

// probeErrorRate is failed probes / all probes in the window: the
// client's error rate. A failed probe is data for it, not an error.
func (s *Store) probeErrorRate(ep *endpointState, now time.Time, window time.Duration) SignalSnapshot {
	out := SignalSnapshot{Unit: ErrorRate.Info().Unit, Source: ep.probeSource, State: Unknown}
	t, ok := ep.tracks[trackKey{ProbeSuccess, SourceProbe}]
	if !ok || t.samples == nil {
		return out
	}
	out.Source, out.State, out.ObservedAt = t.source, s.trackState(t, now), t.lastAt
	if out.State == Error {
		out.State = Live
	}
	vals := t.samples.since(now.Add(-window), now)
	if len(vals) == 0 {
		if out.State == Live {
			out.State, out.Err = NoData, "no probes in "+window.String()
		}
		return out
	}
	failed := 0.0
	for _, v := range vals {
		if v < 0.5 {
			failed++
		}
	}
	r := failed / float64(len(vals)) * ErrorRate.Info().Scale
	out.Value, out.Count = &r, float64(len(vals))
	out.NewestFailed = vals[len(vals)-1] < 0.5
	return out
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
