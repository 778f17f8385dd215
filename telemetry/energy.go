package telemetry

import (
	"math"
	"slices"
	"strconv"
	"strings"
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
//
// Endpoints that share GPUs (quick mode joins every model of a host to all
// its GPUs) each carry the GPUs' whole power; their energy per token
// divides it by the output tokens of all of them, so it is the GPUs'
// J/token, the same for each. Where the sharing is partial (GPU sets
// overlap without being equal) that is an estimate, marked approx.
func (s *Store) energyPerToken(ep *endpointState, now time.Time, window time.Duration, sharing map[string]gpuShare) (SignalSnapshot, bool) {
	power := s.preferred(ep, GPUPower, Server, now)
	if power == nil {
		return SignalSnapshot{}, false
	}
	out := SignalSnapshot{Unit: EnergyPerToken.Info().Unit, State: power.stateAt(now, s.cfg), ObservedAt: power.lastAt, Approx: power.approx}
	watts := power.chart.Points(now, window, 1)[0]
	tps, source, approx := s.outputRate(ep, now, window)
	if sh := sharing[ep.info.Name]; len(sh.endpoints) > 1 {
		tps, source, approx = s.sharedOutputRate(sh, now, window)
	}
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

// gpuShare is the endpoints that share an endpoint's GPUs, itself
// included; exact is false when its GPUs do not all serve that same set.
// rate is the set's summed output rate, computed once per snapshot.
type gpuShare struct {
	endpoints []string
	exact     bool
	rate      *sharedRate
}

type sharedRate struct {
	done   bool
	tps    float64
	source string
	approx bool
}

// gpuSharing maps each endpoint joined to a shared GPU to its share
// (read with s.mu held). Endpoints with GPUs of their own are absent.
// Devices are grouped by the endpoint set they serve first: a host's
// GPUs usually serve one set, so the work is per set, not per GPU.
func (s *Store) gpuSharing(now time.Time) map[string]gpuShare {
	sets := map[string][]string{} // set key → its endpoints
	for _, g := range s.gpus {
		if len(g.dev.Endpoints) < 2 || now.Sub(g.dev.ObservedAt) > s.cfg.MaxWindow {
			continue
		}
		k := strings.Join(g.dev.Endpoints, "\x00")
		if _, ok := sets[k]; !ok {
			sets[k] = g.dev.Endpoints
		}
	}
	if len(sets) == 0 {
		return nil
	}
	// Every set each endpoint is in; single-endpoint GPUs count too, as
	// they make a share partial.
	member := map[string][]string{}
	for k, eps := range sets {
		for _, e := range eps {
			member[e] = append(member[e], k)
		}
	}
	own := map[string]bool{}
	for _, g := range s.gpus {
		if len(g.dev.Endpoints) == 1 && member[g.dev.Endpoints[0]] != nil && now.Sub(g.dev.ObservedAt) <= s.cfg.MaxWindow {
			own[g.dev.Endpoints[0]] = true
		}
	}
	rates := map[string]*sharedRate{}
	out := make(map[string]gpuShare, len(member))
	for e, keys := range member {
		names := sets[keys[0]]
		if len(keys) > 1 {
			union := map[string]bool{}
			for _, k := range keys {
				for _, n := range sets[k] {
					union[n] = true
				}
			}
			names = make([]string, 0, len(union))
			for n := range union {
				names = append(names, n)
			}
		}
		names = slices.Clone(names)
		slices.Sort(names)
		uk := strings.Join(names, "\x00")
		if rates[uk] == nil {
			rates[uk] = &sharedRate{}
		}
		out[e] = gpuShare{endpoints: names, exact: len(keys) == 1 && !own[e], rate: rates[uk]}
	}
	return out
}

// sharedOutputRate is the summed output rate of the endpoints sharing
// GPUs; an endpoint without a token count is left out and marks the sum
// approx, as probe tokens and partial sharing do.
func (s *Store) sharedOutputRate(sh gpuShare, now time.Time, window time.Duration) (float64, string, bool) {
	r := sh.rate
	if !r.done {
		r.tps, r.source, r.approx = s.sumOutputRates(sh.endpoints, now, window)
		r.done = true
	}
	return r.tps, r.source, r.approx || !sh.exact
}

func (s *Store) sumOutputRates(names []string, now time.Time, window time.Duration) (float64, string, bool) {
	total, known, approx := 0.0, 0, false
	for _, name := range names {
		ep, ok := s.endpoints[name]
		if !ok {
			approx = true
			continue
		}
		r, _, a := s.outputRate(ep, now, window)
		if math.IsNaN(r) {
			approx = true
			continue
		}
		total += r
		known++
		approx = approx || a
	}
	source := "output tokens of the " + strconv.Itoa(len(names)) + " endpoints sharing its GPUs"
	if known == 0 {
		return math.NaN(), source, approx
	}
	return total, source, approx
}
