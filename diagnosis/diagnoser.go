package diagnosis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Config tunes a Diagnoser; the zero value takes the defaults.
type Config struct {
	// Recent is the window the current figures are read over (default
	// 30 s): short, so that a fault shows within a few refreshes.
	Recent time.Duration
	// Tau is the baselines' time constant (default 5 min).
	Tau time.Duration
	// Warmup is how much history a baseline needs before a rule compares
	// with it (default 30 s).
	Warmup time.Duration
}

func (c Config) withDefaults() Config {
	if c.Recent <= 0 {
		c.Recent = 30 * time.Second
	}
	if c.Tau <= 0 {
		c.Tau = 5 * time.Minute
	}
	if c.Warmup <= 0 {
		c.Warmup = 30 * time.Second
	}
	return c
}

// Diagnoser keeps each endpoint's baselines between refreshes. It is safe
// for concurrent use: the monitor updates it, views read Latest.
type Diagnoser struct {
	cfg Config

	mu     sync.Mutex
	eps    map[string]*memory
	latest map[string]Diagnosis
}

// memory is what a Diagnoser remembers of one endpoint.
type memory struct {
	base  baselines
	since map[Cause]time.Time
	first time.Time // the first refresh that saw it
}

// New returns a Diagnoser with no history.
func New(cfg Config) *Diagnoser {
	return &Diagnoser{cfg: cfg.withDefaults(), eps: map[string]*memory{}, latest: map[string]Diagnosis{}}
}

// Window is the window Update's snapshot should be read over.
func (d *Diagnoser) Window() time.Duration { return d.cfg.Recent }

// Latest is the last Update's diagnosis of every endpoint, by name.
func (d *Diagnoser) Latest() map[string]Diagnosis {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]Diagnosis, len(d.latest))
	for k, v := range d.latest {
		out[k] = v
	}
	return out
}

// Update diagnoses every endpoint of snap (read over Window) with the SLO
// engine's current alerts, and remembers the figures of the well ones as
// their baselines. Endpoints gone from snap are forgotten.
func (d *Diagnoser) Update(snap telemetry.Snapshot, alerts []slo.Alert) []Diagnosis {
	d.mu.Lock()
	defer d.mu.Unlock()
	figs := make(map[string]figures, len(snap.Endpoints))
	for _, es := range snap.Endpoints {
		figs[es.Name] = readFigures(es)
	}
	ins := make([]*input, len(snap.Endpoints))
	sickGroups := map[string]string{} // group → a replica far from its siblings
	for i, es := range snap.Endpoints {
		mem := d.eps[es.Name]
		if mem == nil {
			mem = &memory{base: baselines{}, since: map[Cause]time.Time{}, first: snap.At}
			d.eps[es.Name] = mem
		}
		ins[i] = &input{es: es, f: figs[es.Name], base: mem.base, warm: d.cfg.Warmup, watched: snap.At.Sub(mem.first),
			siblings: siblings(snap, figs, es)}
		if es.Group != "" && ins[i].replica() != nil {
			sickGroups[es.Group] = es.Name
		}
	}
	out := make([]Diagnosis, 0, len(snap.Endpoints))
	for i, es := range snap.Endpoints {
		mem, in := d.eps[es.Name], ins[i]
		// A group's breach that a sick replica explains is not its
		// siblings' symptom: they keep their own alerts only.
		sick, ok := sickGroups[es.Group]
		in.alerts = activeAlerts(alerts, es, !ok || sick == es.Name)
		diag := d.diagnose(in, snap.At)
		switch diag.Leading() {
		case None:
			mem.base.update(in.f, snap.At, d.cfg.Tau)
		case Unclear:
			// An objective breached from the first refreshes (a threshold
			// below the endpoint's usual, a loaded machine) would keep the
			// baselines cold for good and every later fault unclear: the
			// ones still warming keep learning; warm ones stay as learned.
			mem.base.warmUp(in.f, snap.At, d.cfg.Tau, d.cfg.Warmup)
		}
		stamp(mem, &diag, snap.At)
		out = append(out, diag)
	}
	raiseReplicas(snap, out)
	raisePD(snap, out)
	d.latest = make(map[string]Diagnosis, len(out))
	for _, diag := range out {
		d.latest[diag.Endpoint] = diag
	}
	for name := range d.eps {
		if _, ok := d.latest[name]; !ok {
			delete(d.eps, name)
		}
	}
	return out
}

// diagnose applies the rules in the vocabulary's order.
func (d *Diagnoser) diagnose(in *input, now time.Time) Diagnosis {
	diag := Diagnosis{Endpoint: in.es.Name, At: now, Decomposition: decompose(in.f)}
	if f := in.down(); f != nil {
		diag.Causes = []Finding{*f}
		return diag
	}
	var found []Finding
	add := func(f *Finding) {
		if f != nil {
			found = append(found, *f)
		}
	}
	add(in.errorsDominate())
	add(in.replica())
	if in.symptom() {
		add(in.network())
		add(in.kvCache())
		add(in.prefixCache())
		add(in.specDecode())
		dec, missing := in.decode()
		add(dec)
		if !slices.ContainsFunc(found, func(f Finding) bool { return f.Cause == PrefixCache }) {
			add(in.prefill()) // a collapsed prefix cache is why prefill grew
		}
		add(in.queueing())
		if len(found) == 0 {
			found = []Finding{{Cause: Unclear, Summary: "unclear: " + in.symptomWords(),
				Missing: append(missing, in.missing()...)}}
		}
	}
	if len(found) == 0 {
		found = []Finding{{Cause: None, Summary: "healthy"}}
	}
	sort.SliceStable(found, func(i, j int) bool { return rank(found[i].Cause) < rank(found[j].Cause) })
	diag.Causes = found
	return diag
}

// symptomFigures are the latencies whose growth over their baseline makes
// an endpoint unwell without an objective.
func symptomFigures() [4]string {
	return [...]string{figClientTTFT, figServerTTFT, figClientTPOT, figStep}
}

// symptom reports whether the endpoint is unwell: an objective pending or
// firing, or a latency at twice its baseline or more (a wider margin than
// a cause's, so that the noise of short windows is not a symptom).
func (in *input) symptom() bool {
	if len(in.alerts) > 0 {
		return true
	}
	for _, k := range symptomFigures() {
		if in.doubled(k) {
			return true
		}
	}
	return false
}

// doubled reports whether key is at least collapseRatio × a positive
// baseline.
func (in *input) doubled(key string) bool {
	fg, have := in.f[key]
	b, warm := in.baseline(key)
	return have && warm && b > 0 && fg.value >= collapseRatio*b
}

// symptomWords says what is wrong when no cause can be named.
func (in *input) symptomWords() string {
	if len(in.alerts) > 0 {
		return in.alerts[0].Objective + " " + string(in.alerts[0].State)
	}
	for _, k := range symptomFigures() {
		if in.doubled(k) {
			b, _ := in.baseline(k)
			return fmt.Sprintf("%s %.3g vs %.3g usual", k, in.f[k].value, b)
		}
	}
	return "unwell"
}

// missing lists what would have allowed a call.
func (in *input) missing() []string {
	var out []string
	if h := in.base.warmth(); h < in.warm {
		out = append(out, fmt.Sprintf("baselines: %s of the %s of healthy history needed", h.Round(time.Second), in.warm))
	}
	for key, what := range map[string]string{
		figServerTTFT: "the engine's TTFT (scrape its /metrics or query PromQL)",
		figQueue:      "the engine's queue time",
		figPrefill:    "the engine's prefill time",
	} {
		if _, ok := in.f[key]; !ok {
			out = append(out, what)
		}
	}
	if len(out) == 0 {
		out = append(out, "no measured term (network gap, queue, prefill, decode step) grew by a quarter of the latency over its baseline")
	}
	sort.Strings(out)
	return out
}

// activeAlerts are the alerts pending or firing on es or, for a replica
// withGroup, on its group.
func activeAlerts(alerts []slo.Alert, es telemetry.EndpointSnapshot, withGroup bool) []slo.Alert {
	var out []slo.Alert
	for _, a := range alerts {
		if (a.Endpoint == es.Name || (withGroup && es.Group != "" && a.Endpoint == es.Group)) &&
			(a.State == slo.Pending || a.State == slo.Firing) {
			out = append(out, a)
		}
	}
	return out
}

// siblings are the figures of the other replicas of es's group.
func siblings(snap telemetry.Snapshot, figs map[string]figures, es telemetry.EndpointSnapshot) []figures {
	if es.Group == "" || es.Aggregate {
		return nil
	}
	var out []figures
	for _, o := range snap.Endpoints {
		if o.Group == es.Group && !o.Aggregate && o.Name != es.Name {
			out = append(out, figs[o.Name])
		}
	}
	return out
}

// raiseReplicas names replica on a group's aggregate row when one of its
// replicas is named, with that replica's evidence; and on a server's row
// when one of its data-parallel ranks is.
func raiseReplicas(snap telemetry.Snapshot, out []Diagnosis) {
	ranked := map[string]bool{}
	for _, es := range snap.Endpoints {
		if es.IsRank() {
			ranked[es.Group] = true
		}
	}
	for i, es := range snap.Endpoints {
		if !es.Aggregate && !ranked[es.Name] {
			continue
		}
		for j, o := range snap.Endpoints {
			if o.Group != es.Name || o.Aggregate {
				continue
			}
			for _, f := range out[j].Causes {
				if f.Cause != Replica {
					continue
				}
				f.Summary = "replica " + o.Replica + " far slower than its siblings"
				if o.IsRank() {
					f.Summary = o.Replica + " far slower than the server's other ranks"
				}
				out[i].Causes = slices.DeleteFunc(out[i].Causes, func(f Finding) bool { return f.Cause == None })
				out[i].Causes = append(out[i].Causes, f)
			}
		}
		sort.SliceStable(out[i].Causes, func(a, b int) bool { return rank(out[i].Causes[a].Cause) < rank(out[i].Causes[b].Cause) })
	}
}

// stamp sets each finding's Since: the first refresh of its current run.
func stamp(mem *memory, diag *Diagnosis, now time.Time) {
	named := map[Cause]bool{}
	for i := range diag.Causes {
		c := diag.Causes[i].Cause
		named[c] = true
		if _, ok := mem.since[c]; !ok {
			mem.since[c] = now
		}
		diag.Causes[i].Since = mem.since[c]
	}
	for c := range mem.since {
		if !named[c] {
			delete(mem.since, c)
		}
	}
}

// decompose fills the decomposition from the figures.
func decompose(f figures) Decomposition {
	get := func(k string) *float64 {
		if v, ok := f[k]; ok {
			return ptr(round(v.value))
		}
		return nil
	}
	d := Decomposition{ClientTTFTMs: get(figClientTTFT), ServerTTFTMs: get(figServerTTFT), NetworkMs: get(figGap),
		QueueMs: get(figQueue), PrefillMs: get(figPrefill), TPOTMs: get(figStep), TPOTFloorMs: get(figFloor),
		MBUPct: get(figMBU), Running: get(figRunning)}
	if s, ok := f[figServerTTFT]; ok {
		d.ServerStat = s.stat
	}
	if m, ok := f[figMBU]; ok && d.TPOTFloorMs != nil {
		d.FloorFrom = "measured"
		if m.approx {
			d.FloorFrom = "estimated"
		}
	}
	return d
}

func rank(c Cause) int { return slices.Index(Vocabulary, c) }

func ptr(v float64) *float64 { return &v }

// round keeps four significant digits: evidence is read, not recomputed.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
