package gpu

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// reading is one GPU's values from one refresh. NaN means no value.
type reading struct {
	key    string // host/uuid-or-index[/mig]
	host   string
	index  string
	uuid   string
	model  string
	labels map[string]string // lower-cased label names
	mig    string
	dram   float64 // DRAM_ACTIVE ratio
	busy   float64 // memory busy time ratio (MEM_COPY_UTIL/100, utilization.memory/100)
	fbUsed float64 // MiB
	// fbTotal is FB_TOTAL or memory.total; without it, used + free +
	// reserved (dcgm-exporter's default fields) make the total.
	fbTotal, fbFree, fbReserved float64 // MiB
	util                        float64 // GPU_UTIL/100, utilization.gpu/100
	power, powerLimit           float64 // W
	energy                      float64 // TOTAL_ENERGY_CONSUMPTION, mJ since driver load
	temp                        float64 // °C
	// counterPower is the mean power since the previous refresh from the
	// energy counter (energyMeter), NaN when unknown.
	counterPower float64
}

func newReading() *reading {
	nan := math.NaN()
	return &reading{dram: nan, busy: nan, fbUsed: nan, fbTotal: nan, fbFree: nan, fbReserved: nan, util: nan,
		power: nan, powerLimit: nan, energy: nan, temp: nan, counterPower: nan, labels: map[string]string{}}
}

// memTotal is the framebuffer size in MiB (NaN when unknown).
func (r *reading) memTotal() float64 {
	switch {
	case !math.IsNaN(r.fbTotal):
		return r.fbTotal
	case !math.IsNaN(r.fbUsed) && !math.IsNaN(r.fbFree):
		t := r.fbUsed + r.fbFree
		if !math.IsNaN(r.fbReserved) {
			t += r.fbReserved
		}
		return t
	}
	return math.NaN()
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
		if !t.IfMatched {
			get(t.Endpoint, false) // a target without GPUs still reports "no data"
		}
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
// summed framebuffer use and summed power. Power is each GPU's mean since
// the previous refresh from its energy counter where there is one, else
// its sampled draw; a group where some GPUs have no power gets the sum of
// the others, marked approx.
func (g *group) values() (bw float64, approx bool, fb, power float64, powerApprox bool) {
	var dram, busy, fbSum, pSum float64
	var nd, nb, nf, np int
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
		if p := r.meanPower(); !math.IsNaN(p) {
			pSum += p
			np++
		}
	}
	bw, fb, power = math.NaN(), math.NaN(), math.NaN()
	switch {
	case nd > 0:
		bw = dram / float64(nd)
	case nb > 0:
		bw, approx = busy/float64(nb), true
	}
	if nf > 0 {
		fb = fbSum
	}
	if np > 0 {
		power, powerApprox = pSum, np < len(g.gpus)
	}
	return bw, approx, fb, power, powerApprox
}

// meanPower is the GPU's power for the endpoint figures: the energy
// counter's mean since the previous refresh when known, else the draw.
func (r *reading) meanPower() float64 {
	if !math.IsNaN(r.counterPower) {
		return r.counterPower
	}
	return r.power
}

// observations turns groups into samples (NaN → no data) and every
// reading into a device state joined to its endpoints.
func observations(readings []*reading, groups []*group, base telemetry.Observation) []telemetry.Observation {
	var out []telemetry.Observation
	joined := map[*reading][]string{}
	for _, g := range groups {
		o := base
		o.Endpoint = g.endpoint
		if g.unmapped {
			e := o
			e.Kind = telemetry.KindEndpoint
			e.Info = &telemetry.Endpoint{Name: g.endpoint, Labels: map[string]string{"kind": "gpu"}}
			out = append(out, e)
		}
		bw, approx, fb, power, powerApprox := g.values()
		out = append(out, sample(o, telemetry.GPUMemBW, bw, approx), sample(o, FBUsedMiB, fb, false),
			sample(o, telemetry.GPUPower, power, powerApprox))
		for _, r := range g.gpus {
			joined[r] = append(joined[r], g.endpoint)
		}
	}
	for _, r := range readings {
		o := base
		o.Kind, o.GPU = telemetry.KindGPU, r.device(base.Source, joined[r])
		out = append(out, o)
	}
	return out
}

const mib = 1 << 20

// device is the reading as the telemetry device state.
func (r *reading) device(source string, endpoints []string) *telemetry.GPUDevice {
	ptr := func(v, scale float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		x := v * scale
		return &x
	}
	return &telemetry.GPUDevice{Key: r.key, Host: r.host, Index: r.index, UUID: r.uuid, MIG: r.mig, Name: r.model,
		Source: source, Endpoints: endpoints,
		MemUsedBytes: ptr(r.fbUsed, mib), MemTotalBytes: ptr(r.memTotal(), mib),
		DRAMActiveRatio: ptr(r.dram, 1), MemBusyRatio: ptr(r.busy, 1), UtilRatio: ptr(r.util, 1),
		PowerW: ptr(r.power, 1), PowerLimitW: ptr(r.powerLimit, 1), TemperatureCelsius: ptr(r.temp, 1),
		EnergyJ: ptr(r.energy/1000, 1)}
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

// energyMeter turns each GPU's energy counter into its mean power
// between the counter's last two changes. dcgm-exporter refreshes fields
// on its own period (30 s by default) while ttftop may scrape every
// second: an unchanged counter is not zero power, so the last mean is
// held until the counter moves again. A counter that goes down (driver
// reload) or a GPU seen for the first time has no mean yet.
type energyMeter struct {
	last map[string]energyReading
}

type energyReading struct {
	mJ    float64
	at    time.Time
	power float64 // W between the last two changes, NaN before
}

// update sets counterPower on the readings with a counter and forgets
// GPUs that are gone.
func (m *energyMeter) update(readings []*reading, at time.Time) {
	next := make(map[string]energyReading, len(readings))
	for _, r := range readings {
		if math.IsNaN(r.energy) {
			continue
		}
		cur := energyReading{mJ: r.energy, at: at, power: math.NaN()}
		if prev, ok := m.last[r.key]; ok {
			dt := at.Sub(prev.at).Seconds()
			switch {
			case r.energy == prev.mJ:
				cur = prev // not refreshed yet: keep the baseline, hold the mean
			case r.energy > prev.mJ && dt > 0:
				cur.power = (r.energy - prev.mJ) / 1000 / dt
			}
		}
		r.counterPower = cur.power
		next[r.key] = cur
	}
	m.last = next
}

// unmappedWarning says which GPUs no target claims and why: no targets
// at all, or the hosts (and other criteria) the targets look for, so a
// join that fails on a host name says so.
func unmappedWarning(unmapped []string, targets []Target) string {
	msg := fmt.Sprintf("%d GPU(s) not mapped to an endpoint: %s", len(unmapped), strings.Join(unmapped, ", "))
	if len(targets) == 0 {
		return msg + " (no endpoint to join them to: give targets, or probe a server on their host)"
	}
	var hosts []string
	for _, t := range targets {
		if t.Host != "" && !slices.Contains(hosts, t.Host) {
			hosts = append(hosts, t.Host)
		}
	}
	if len(hosts) > 0 {
		return msg + " (their Hostname/pod labels match no endpoint host: " + strings.Join(hosts, ", ") + ")"
	}
	return msg + " (no target's pod, namespace, GPU or selector matches them)"
}
