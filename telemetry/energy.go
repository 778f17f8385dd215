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
// when one feeds the endpoint, else the tokens ttftop's own probes
// received in the window (marked approx: the GPUs also serve everyone
// else's requests, so that figure is an upper bound). ok is false when
// the endpoint has no GPU power.
//
// Endpoints that share GPUs (quick mode joins every model of a host to all
// its GPUs; PromQL joins every replica without a pod to its host's) each
// carry the GPUs' whole power, marked Shared; their energy per token
// divides it by the output tokens of all of them, so it is the GPUs'
// J/token, the same for each, never the whole power over one endpoint's
// tokens. Where the sharing is partial (GPU sets overlap without being
// equal) that is an estimate, marked approx.
func (s *Store) energyPerToken(ep *endpointState, now time.Time, window time.Duration, sharing *gpuShares) (SignalSnapshot, bool) {
	power := s.preferred(ep, GPUPower, Server, now)
	if power == nil {
		return SignalSnapshot{}, false
	}
	out := SignalSnapshot{Unit: EnergyPerToken.Info().Unit, State: s.trackState(power, now), ObservedAt: power.lastAt, Approx: power.approx}
	watts := power.chart.Points(now, window, 1)[0]
	tps, source, approx := s.outputRate(ep, now, window)
	if sh, ok := sharing.of(ep.info.Name, power); ok {
		tps, source, approx = s.sharedOutputRate(sh, now, window)
		out.Shared = sh.public()
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
	out.Young, out.SeriesAgeS = s.energyYoung(ep, power, now)
	return out, true
}

// energyYoung marks energy per token young when its power is a rate over
// a series younger than its window (PromQL: the energy counter's) and
// younger than the output tokens' series: power then reads lower than
// the tokens do, and so does their ratio. Equally young, both read low
// alike and the ratio is right.
func (s *Store) energyYoung(ep *endpointState, power *track, now time.Time) (bool, float64) {
	age := power.seriesAge
	if age <= 0 {
		return false, 0
	}
	if t := s.preferred(ep, OutputTPS, Server, now); t != nil && t.seriesAge > 0 && t.seriesAge <= age {
		return false, 0
	}
	return true, age.Seconds()
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

// GPUShare says which endpoints share the GPUs behind a GPU figure
// (several models served on one host): the figure is the GPUs' whole
// draw, not a per-endpoint part of it.
type GPUShare struct {
	// Scope is what is shared: "host" (the GPUs of one host), "gpus" (a
	// set of GPUs), "group" (GPU series joined by grouping labels).
	Scope string `json:"scope"`
	// By is how many endpoints share them, this one included.
	By int `json:"by"`
	// Endpoints are those endpoints, sorted.
	Endpoints []string `json:"endpoints"`
	// Partial is set when some of the GPUs serve only some of them: the
	// shared energy per token is then an estimate.
	Partial bool `json:"partial,omitempty"`
}

func (g *GPUShare) clone() *GPUShare {
	if g == nil {
		return nil
	}
	c := *g
	c.Endpoints = slices.Clone(g.Endpoints)
	return &c
}

// gpuShare is the endpoints that share an endpoint's GPUs, itself
// included; exact is false when its GPUs do not all serve that same set.
// rate is the set's summed output rate, computed once per snapshot.
type gpuShare struct {
	scope     string
	endpoints []string
	exact     bool
	rate      *sharedRate
}

func (sh gpuShare) public() *GPUShare {
	return &GPUShare{Scope: sh.scope, By: len(sh.endpoints), Endpoints: slices.Clone(sh.endpoints), Partial: !sh.exact}
}

type sharedRate struct {
	done   bool
	tps    float64
	source string
	approx bool
}

// gpuShares is one snapshot's GPU sharing: from the devices GPU sources
// list (quick mode), and the shares sources state on their power samples
// (PromQL's host joins); the devices' is worked out on first use.
type gpuShares struct {
	s       *Store
	now     time.Time
	read    bool
	devices map[string]gpuShare
	rates   map[string]*sharedRate
}

func (s *Store) newGPUShares(now time.Time) *gpuShares {
	return &gpuShares{s: s, now: now, rates: map[string]*sharedRate{}}
}

// of returns the share of endpoint name, whose GPU power is track power:
// the one its power source stated, else the devices'. ok is false when its
// GPUs are its own.
func (g *gpuShares) of(name string, power *track) (gpuShare, bool) {
	if sh := power.share; sh != nil && len(sh.Endpoints) > 1 {
		names := slices.Clone(sh.Endpoints)
		slices.Sort(names)
		names = slices.Compact(names)
		return gpuShare{scope: sh.Scope, endpoints: names, exact: !sh.Partial, rate: g.rate(names)}, true
	}
	if !g.read {
		g.devices, g.read = g.s.gpuSharing(g.now, g.rate), true
	}
	sh, ok := g.devices[name]
	return sh, ok && len(sh.endpoints) > 1
}

// rate is the shared output-rate cache entry of a set of endpoints.
func (g *gpuShares) rate(names []string) *sharedRate {
	k := strings.Join(names, "\x00")
	r := g.rates[k]
	if r == nil {
		r = &sharedRate{}
		g.rates[k] = r
	}
	return r
}

// gpuSharing maps each endpoint joined to a shared GPU to its share
// (read with s.mu held). Endpoints with GPUs of their own are absent.
// Devices are grouped by the endpoint set they serve first: a host's
// GPUs usually serve one set, so the work is per set, not per GPU.
func (s *Store) gpuSharing(now time.Time, rateOf func([]string) *sharedRate) map[string]gpuShare {
	sets := map[string][]string{} // set key → its endpoints
	hosts := map[string]map[string]bool{}
	for _, g := range s.gpus {
		if len(g.dev.Endpoints) < 2 || now.Sub(g.dev.ObservedAt) > s.cfg.MaxWindow {
			continue
		}
		k := strings.Join(g.dev.Endpoints, "\x00")
		if _, ok := sets[k]; !ok {
			sets[k] = g.dev.Endpoints
			hosts[k] = map[string]bool{}
		}
		hosts[k][g.dev.Host] = true
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
	out := make(map[string]gpuShare, len(member))
	for e, keys := range member {
		names := sets[keys[0]]
		scope := "gpus"
		if h := hosts[keys[0]]; len(keys) == 1 && len(h) == 1 && !h[""] {
			scope = "host"
		}
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
		out[e] = gpuShare{scope: scope, endpoints: names, exact: len(keys) == 1 && !own[e], rate: rateOf(names)}
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
