package telemetry

import (
	"math"
	"time"
)

// energyPerToken derives GPU energy per output token over the window:
//
//	J/token = energy over the window / output tokens over the window
//	        = mean GPU power over the window (W = J/s)
//	          / mean output tokens per second over the window
//
// Both means come from the same window of the chart rings. GPU power is
// the sources' gpu_power: where dcgm-exporter has the energy counter it
// is that counter's increase per scrape ÷ the scrape interval, so its
// mean over the window is Δenergy/Δt exactly; otherwise it is sampled
// power draw. Output tokens are the server's counter (its output tok/s)
// when one feeds the endpoint, else the tokens tokentop's own probes
// received in the window (marked approx: the GPUs also serve everyone
// else's requests, so that figure is an upper bound). ok is false when
// the endpoint has no GPU power.
func (s *Store) energyPerToken(ep *endpointState, now time.Time, window time.Duration) (SignalSnapshot, bool) {
	power := s.preferred(ep, GPUPower, Server, now)
	if power == nil {
		return SignalSnapshot{}, false
	}
	out := SignalSnapshot{Unit: EnergyPerToken.Info().Unit, State: power.stateAt(now, s.cfg), ObservedAt: power.lastAt, Approx: power.approx}
	watts := power.chart.Points(now, window, 1)[0]
	tps, source, approx := s.outputRate(ep, now, window)
	out.Source = "derived: " + power.source + " ÷ " + source
	out.Approx = out.Approx || approx
	switch {
	case out.State == Error:
		out.Err = power.err
	case math.IsNaN(watts):
		out.State, out.Err = NoData, "no GPU power in "+window.String()
	case math.IsNaN(tps):
		out.State, out.Err = NoData, "no output token count"
	case tps <= 0:
		out.State, out.Err = NoData, "no output tokens in "+window.String()
	default:
		v := watts / tps
		out.Value = &v
	}
	return out, true
}

// outputRate is the endpoint's mean output tokens per second over the
// window, and where it comes from: the server's counter, else the
// endpoint's probes (approx). NaN when neither is known.
func (s *Store) outputRate(ep *endpointState, now time.Time, window time.Duration) (float64, string, bool) {
	if t := s.preferred(ep, OutputTPS, Server, now); t != nil {
		return t.chart.Points(now, window, 1)[0], t.source + " output tokens", false
	}
	if !ep.probed() {
		return math.NaN(), "no output token source", false
	}
	from := now.Add(-window)
	covered := min(window, now.Sub(ep.seen))
	// The store keeps the last ProbeHistory probes: when they do not
	// reach back to the window's start, the rate is over the span they
	// cover (from the oldest kept, whose tokens are then left out).
	tokens := 0
	oldest := now
	for _, p := range ep.probes {
		if p.At.Before(oldest) {
			oldest = p.At
		}
	}
	full := len(ep.probes) >= s.cfg.ProbeHistory
	if full && oldest.After(from) {
		covered, from = now.Sub(oldest), oldest
	}
	for _, p := range ep.probes {
		if p.At.After(from) && !p.At.After(now) && p.OK {
			tokens += p.OutputTokens
		}
	}
	if covered <= 0 {
		return math.NaN(), ep.probeSource + " probe tokens", true
	}
	return float64(tokens) / covered.Seconds(), ep.probeSource + " probe tokens", true
}
