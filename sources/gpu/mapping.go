package gpu

import (
	"math"
	"sort"
	"strings"

	"github.com/tokentop/tokentop/telemetry"
)

// reading is one GPU's values from one refresh. NaN means no value.
type reading struct {
	key    string // host/uuid-or-index[/mig]
	host   string
	index  string
	uuid   string
	model  string
	labels map[string]string // lower-cased label names
	dram   float64           // DRAM_ACTIVE ratio
	busy   float64           // memory busy time ratio (MEM_COPY_UTIL/100, utilization.memory/100)
	fbUsed float64           // MiB
}

func newReading() *reading {
	return &reading{dram: math.NaN(), busy: math.NaN(), fbUsed: math.NaN(), labels: map[string]string{}}
}

func (r *reading) label(name string) string { return r.labels[strings.ToLower(name)] }

// matches reports whether GPU r belongs to target t.
func (t Target) matches(r *reading) bool {
	if t.Host != "" && !hostMatches(t.Host, r) {
		return false
	}
	if t.Pod != "" && r.label("pod") != t.Pod {
		return false
	}
	if t.Namespace != "" && r.label("namespace") != t.Namespace {
		return false
	}
	if len(t.GPUs) > 0 {
		ok := false
		for _, g := range t.GPUs {
			if g == r.index || (r.uuid != "" && strings.EqualFold(g, r.uuid)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(t.Selectors) == 0 {
		return true
	}
	for _, sel := range t.Selectors {
		ok := true
		for k, v := range sel {
			if r.label(k) != v {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func hostMatches(host string, r *reading) bool {
	h := strings.ToLower(host)
	first, _, _ := strings.Cut(h, ".")
	for _, c := range []string{r.host, r.label("pod")} {
		c = strings.ToLower(c)
		if c != "" && (c == h || c == first) {
			return true
		}
	}
	return false
}

// group is the GPUs of one endpoint.
type group struct {
	endpoint string
	unmapped bool
	gpus     []*reading
}

// assign maps readings to targets (a GPU may serve several targets);
// unclaimed GPUs form "gpu:<host>" groups when emitUnmapped.
func assign(readings []*reading, targets []Target, emitUnmapped bool) (groups []*group, unmapped []string) {
	byEndpoint := map[string]*group{}
	get := func(name string, un bool) *group {
		g := byEndpoint[name]
		if g == nil {
			g = &group{endpoint: name, unmapped: un}
			byEndpoint[name] = g
			groups = append(groups, g)
		}
		return g
	}
	for _, t := range targets {
		get(t.Endpoint, false) // a target without GPUs still reports "no data"
	}
	for _, r := range readings {
		claimed := false
		for _, t := range targets {
			if t.matches(r) {
				get(t.Endpoint, false).gpus = append(get(t.Endpoint, false).gpus, r)
				claimed = true
			}
		}
		if !claimed {
			unmapped = append(unmapped, r.key)
			if emitUnmapped {
				host := r.host
				if host == "" {
					host = "local"
				}
				g := get("gpu:"+host, true)
				g.gpus = append(g.gpus, r)
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].endpoint < groups[j].endpoint })
	return groups, unmapped
}

// values aggregates a group: mean DRAM activity (or busy time, approx),
// summed framebuffer use.
func (g *group) values() (bw float64, approx bool, fb float64) {
	var dram, busy, fbSum float64
	var nd, nb, nf int
	for _, r := range g.gpus {
		if !math.IsNaN(r.dram) {
			dram += r.dram
			nd++
		}
		if !math.IsNaN(r.busy) {
			busy += r.busy
			nb++
		}
		if !math.IsNaN(r.fbUsed) {
			fbSum += r.fbUsed
			nf++
		}
	}
	bw, fb = math.NaN(), math.NaN()
	switch {
	case nd > 0:
		bw = dram / float64(nd)
	case nb > 0:
		bw, approx = busy/float64(nb), true
	}
	if nf > 0 {
		fb = fbSum
	}
	return bw, approx, fb
}

// observations turns groups into samples (NaN → no data).
func observations(groups []*group, base telemetry.Observation) []telemetry.Observation {
	var out []telemetry.Observation
	for _, g := range groups {
		o := base
		o.Endpoint = g.endpoint
		if g.unmapped {
			e := o
			e.Kind = telemetry.KindEndpoint
			e.Info = &telemetry.Endpoint{Name: g.endpoint, Labels: map[string]string{"kind": "gpu"}}
			out = append(out, e)
		}
		bw, approx, fb := g.values()
		out = append(out, sample(o, telemetry.GPUMemBW, bw, approx), sample(o, FBUsedMiB, fb, false))
	}
	return out
}

func sample(o telemetry.Observation, sig telemetry.Signal, v float64, approx bool) telemetry.Observation {
	o.Signal = sig
	if math.IsNaN(v) {
		o.Kind = telemetry.KindNoData
		return o
	}
	o.Kind, o.Value, o.Approx = telemetry.KindSample, v, approx
	return o
}

// models lists the distinct GPU model names of the readings.
func models(readings []*reading) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range readings {
		if r.model != "" && !seen[r.model] {
			seen[r.model] = true
			out = append(out, r.model)
		}
	}
	sort.Strings(out)
	return out
}
