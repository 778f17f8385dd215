package slo

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Options tune the engine; the zero value is usable.
type Options struct {
	// Scale divides the period, burn windows, For and KeepFiringFor of
	// Ratio objectives, so a demo shows a 28-day objective's alerts within
	// minutes (4032 turns 28 d into 10 m). 0 or 1 = real time.
	Scale float64
	// MinWindow is the shortest burn window after scaling (default 10 s
	// when Scale > 1): a window shorter than the data's refresh holds no
	// events and can never judge anything.
	MinWindow time.Duration
	// History is how many resolved alerts are kept (default 100).
	History int
	// ResolvedFor is how long Alerts still lists a resolved alert
	// (default 15 m, as Prometheus keeps resolved alerts).
	ResolvedFor time.Duration
	// MaxRules bounds objective×endpoint pairs, against a source that
	// invents endpoints without end (default 4096).
	MaxRules int
	// EvalStaleAfter: Badge says STALE when Evaluate has not run for this
	// long, so a stuck engine never shows an old OK (default 1 m).
	EvalStaleAfter time.Duration
}

func (o Options) withDefaults() Options {
	if o.Scale > 1 && o.MinWindow == 0 {
		o.MinWindow = 10 * time.Second
	}
	if o.History <= 0 {
		o.History = 100
	}
	if o.ResolvedFor <= 0 {
		o.ResolvedFor = 15 * time.Minute
	}
	if o.MaxRules <= 0 {
		o.MaxRules = 4096
	}
	if o.EvalStaleAfter <= 0 {
		o.EvalStaleAfter = time.Minute
	}
	return o
}

// Engine evaluates objectives against the telemetry store and its own
// event counters, and keeps alert state and history. It is a
// telemetry.Sink; all methods are safe for concurrent use. It reads no
// clock: every time comes from observations or the caller.
type Engine struct {
	mu       sync.Mutex
	objs     []Objective
	store    *telemetry.Store
	opts     Options
	prefer   []telemetry.SourceKind
	storeCfg telemetry.StoreConfig
	warnings []string

	rules      []*rule
	byEndpoint map[string][]*rule
	dropped    int // endpoints without rules because MaxRules was reached
	refused    map[string]bool
	probed     map[string]bool // endpoints fed by a probe
	// up: endpoints whose target health is known (telemetry.TargetUp);
	// aggregates: model rows (Endpoint.Aggregate).
	up         map[string]bool
	aggregates map[string]bool
	// replicas: a replica's model row (Endpoint.Group), and each model
	// row's replicas. A model's only replica is not judged: its model row
	// says the same, and one pod must not raise every alert twice.
	replicaOf map[string]string
	replicas  map[string]map[string]bool
	retired   []Transition // from retire, returned by the next Evaluate
	history   []Alert
	lastEval  time.Time
}

// New returns an engine for objs (completed with WithDefaults and scaled
// by opts.Scale). Invalid objectives are left out and reported by
// Warnings, as are duplicate names (renamed). store may be nil when only
// ratio objectives are used.
func New(objs []Objective, store *telemetry.Store, opts Options) *Engine {
	opts = opts.withDefaults()
	e := &Engine{store: store, opts: opts, byEndpoint: map[string][]*rule{},
		refused: map[string]bool{}, probed: map[string]bool{}, up: map[string]bool{}, aggregates: map[string]bool{},
		replicaOf: map[string]string{}, replicas: map[string]map[string]bool{}}
	e.storeCfg = telemetry.DefaultStoreConfig()
	if store != nil {
		e.storeCfg = store.Config()
	}
	e.prefer = e.storeCfg.Prefer
	names := map[string]int{}
	for _, o := range objs {
		o = o.WithDefaults()
		if opts.Scale > 1 {
			o = o.Scaled(opts.Scale, opts.MinWindow)
		}
		if err := o.Validate(); err != nil {
			e.warnings = append(e.warnings, err.Error()+" (ignored)")
			continue
		}
		if n := names[o.Name]; n > 0 {
			renamed := fmt.Sprintf("%s-%d", o.Name, n+1)
			e.warnings = append(e.warnings, fmt.Sprintf("two objectives are named %q: the second is %q", o.Name, renamed))
			o.Name = renamed
		}
		names[o.Name]++
		e.warnings = append(e.warnings, o.Warnings()...)
		if o.Kind != Ratio && store != nil && o.Window > e.storeCfg.MaxWindow {
			e.warnings = append(e.warnings, fmt.Sprintf("objective %s: window %s is longer than the %s the store keeps",
				o.Name, FormatDuration(o.Window), FormatDuration(e.storeCfg.MaxWindow)))
		}
		e.objs = append(e.objs, o)
	}
	return e
}

// Objectives returns the objectives in use, completed and scaled.
func (e *Engine) Objectives() []Objective {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Objective, len(e.objs))
	copy(out, e.objs)
	return out
}

// Warnings lists objectives left out or unable to work as meant.
func (e *Engine) Warnings() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := append([]string(nil), e.warnings...)
	if e.dropped > 0 {
		out = append(out, fmt.Sprintf("%d endpoints not evaluated: more than %d objective×endpoint pairs", e.dropped, e.opts.MaxRules))
	}
	return out
}

// Observe counts the good and bad events of Ratio objectives; percentile
// and error-rate objectives read the store instead. A retired endpoint's
// alerts end (see retire).
func (e *Engine) Observe(o telemetry.Observation) {
	if o.Endpoint == "" || o.Kind == telemetry.KindSource {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if o.Kind == telemetry.KindRetire {
		e.retire(o.Endpoint, o.At, o.Err)
		e.leaveGroup(o.Endpoint, o.At)
		return
	}
	if o.Kind == telemetry.KindEndpoint && o.Info != nil && o.Info.Group != "" {
		e.joinGroup(o.Endpoint, o.Info.Group)
	}
	if o.Kind == telemetry.KindEndpoint && o.Info != nil && o.Info.Aggregate && len(e.aggregates) < 2*e.opts.MaxRules {
		e.aggregates[o.Endpoint] = true
	}
	probed := telemetry.SideOf(telemetry.SourceKindOf(o.Source)) == telemetry.Client
	up := o.Signal == telemetry.TargetUp
	for _, r := range e.ensure(o.Endpoint, feeds{probed: probed, up: up}) {
		if r.events != nil && r.feeds {
			r.events.observe(o, e.objs[r.obj])
		}
	}
}

// feeds says what an observation tells of its endpoint: probed (a
// probe's), up (its target health).
type feeds struct{ probed, up bool }

// applies reports whether objective i has a rule on the endpoint: it
// matches the name, probe-only objectives need a probed endpoint and
// target_up ones an endpoint whose target health is known.
func (e *Engine) applies(i int, endpoint string, f feeds) bool {
	o := &e.objs[i]
	return o.Matches(endpoint) && (o.Kind != Availability || f.probed) && (o.Kind != TargetUp || f.up)
}

// ensure returns the endpoint's rules, creating those that apply on first
// sight (and a probe-only or target_up objective's once the endpoint is
// probed or its target health known). Past MaxRules an endpoint gets no
// new ones (remembered, and counted once).
func (e *Engine) ensure(endpoint string, f feeds) []*rule {
	if g, ok := e.replicaOf[endpoint]; ok && len(e.replicas[g]) < 2 {
		return nil // a model's only replica: its model row is judged
	}
	rs, known := e.byEndpoint[endpoint]
	if known && (!f.probed || e.probed[endpoint]) && (!f.up || e.up[endpoint]) {
		return rs
	}
	if !known && len(e.byEndpoint) >= 2*e.opts.MaxRules {
		return nil // names beyond even the remembered refusals: not counted
	}
	if known && rs == nil && e.refused[endpoint] {
		return nil
	}
	if f.probed && !e.probed[endpoint] {
		e.probed[endpoint] = true
		for _, r := range rs {
			r.demoteTargetUp()
		}
	}
	if f.up {
		e.up[endpoint] = true
	}
	all := feeds{probed: e.probed[endpoint], up: e.up[endpoint]}
	var matching []int
	n := 0
	for i := range e.objs {
		if e.applies(i, endpoint, all) && !slices.ContainsFunc(rs, func(r *rule) bool { return r.obj == i }) {
			matching = append(matching, i)
			n += len(e.severityGroups(&e.objs[i], endpoint))
		}
	}
	if len(e.rules)+n > e.opts.MaxRules {
		if !known {
			e.byEndpoint[endpoint] = nil
			e.refused[endpoint] = true
			e.dropped++
		}
		return rs
	}
	for _, i := range matching {
		o := &e.objs[i]
		var ev *events
		if o.Kind == Ratio {
			ev = newEvents(*o) // shared by the objective's severities
		}
		for k, g := range e.severityGroups(o, endpoint) {
			r := &rule{obj: i, endpoint: endpoint, pairs: g.pairs, events: ev, feeds: k == 0, noneUp: g.noneUp,
				resolvedFor: e.opts.ResolvedFor, alert: Alert{
					Objective: o.Name, Endpoint: endpoint, Kind: o.Kind, Signal: o.Signal, State: Inactive,
					Threshold: o.Threshold, Unit: o.valueUnit(), Description: o.String(), Severity: g.severity,
				}}
			if o.Kind == TargetUp {
				r.alert.Threshold, r.alert.Description = g.upThreshold, g.description
				if all.probed {
					r.demoteTargetUp()
				}
			}
			if len(g.pairs) > 0 {
				r.alert.Threshold = g.pairs[0].Factor
			}
			e.rules = append(e.rules, r)
			rs = append(rs, r)
		}
	}
	e.byEndpoint[endpoint] = rs
	return rs
}

// demoteTargetUp makes a probed endpoint's target_up alert a warning: its
// probes' availability objective already pages when the server is down, so
// a scrape target down beside it is the same outage (one page, not two),
// and alone (probes fine, /metrics dead) it is lost figures, not an outage.
// Only while the alert has not yet left inactive, so that its Alertmanager
// labels never change under a pending or firing alert.
func (r *rule) demoteTargetUp() {
	if r.alert.Kind == TargetUp && r.alert.Severity == "page" && r.alert.State == Inactive {
		r.alert.Severity = "warning"
	}
}

// joinGroup records a replica of a model row (bounded like the rules).
func (e *Engine) joinGroup(endpoint, group string) {
	if _, ok := e.replicaOf[endpoint]; !ok && len(e.replicaOf) >= 2*e.opts.MaxRules {
		return
	}
	e.replicaOf[endpoint] = group
	if e.replicas[group] == nil {
		e.replicas[group] = map[string]bool{}
	}
	e.replicas[group][endpoint] = true
}

// leaveGroup forgets a retired replica; when its model is left with one,
// that one's alerts end too, as its model row judges it again.
func (e *Engine) leaveGroup(endpoint string, at time.Time) {
	g, ok := e.replicaOf[endpoint]
	if !ok {
		return
	}
	delete(e.replicaOf, endpoint)
	delete(e.replicas[g], endpoint)
	if len(e.replicas[g]) == 1 {
		for last := range e.replicas[g] {
			e.retire(last, at, "the only replica of "+g+" now: its model row is judged")
		}
	}
	if len(e.replicas[g]) == 0 {
		delete(e.replicas, g)
	}
}

// retire ends an endpoint's alerts: the endpoint is gone (a placeholder
// for a server whose models were not known yet, replaced by its models).
// A firing alert resolves — the episode is over, with its reason — and the
// rules are dropped; the transitions come with the next Evaluate.
func (e *Engine) retire(endpoint string, at time.Time, reason string) {
	rs := e.byEndpoint[endpoint]
	delete(e.byEndpoint, endpoint)
	delete(e.probed, endpoint)
	delete(e.up, endpoint)
	delete(e.aggregates, endpoint)
	if len(rs) == 0 {
		return
	}
	e.rules = slices.DeleteFunc(e.rules, func(r *rule) bool { return slices.Contains(rs, r) })
	for _, r := range rs {
		a := r.alert
		from := a.State
		switch from {
		case Firing:
			a.State, a.ResolvedAt = Resolved, at
		case Pending:
			a.State = Inactive
		default:
			continue
		}
		a.Reason, a.UnknownSince, a.EvaluatedAt = reason, time.Time{}, at
		if a.State == Resolved {
			e.remember(a)
		}
		e.retired = append(e.retired, Transition{At: at, From: from, To: a.State, Alert: a})
	}
}

type severityGroup struct {
	severity string
	pairs    []BurnWindow
	// target_up: noneUp breaches only when no target is up (else: when
	// any is not); its threshold and description.
	noneUp      bool
	upThreshold float64
	description string
}

// severityGroups splits a Ratio objective's burn windows by severity: each
// severity is its own alert (as Sloth generates page and ticket alerts),
// so a ticket firing first and a page firing later are two notifications
// with stable Alertmanager labels. A target_up objective on a model row
// has two: a warning while some replicas are down, its own severity
// (page) once none is up; on a replica or scraped endpoint, its own
// severity once the target is down. Other kinds have one group.
func (e *Engine) severityGroups(o *Objective, endpoint string) []severityGroup {
	if o.Kind == TargetUp {
		down := severityGroup{severity: o.Severity, noneUp: true, upThreshold: 1,
			description: "target up for " + FormatDuration(o.For)}
		if !e.aggregates[endpoint] {
			return []severityGroup{down}
		}
		down.upThreshold = 0
		down.description = "some replica up for " + FormatDuration(o.For)
		some := severityGroup{severity: "warning", upThreshold: 1, description: "all replicas up for " + FormatDuration(o.For)}
		if o.Severity == some.severity {
			return []severityGroup{some}
		}
		return []severityGroup{some, down}
	}
	if o.Kind != Ratio {
		return []severityGroup{{severity: o.Severity}}
	}
	var gs []severityGroup
	for _, bw := range o.BurnWindows {
		i := slices.IndexFunc(gs, func(g severityGroup) bool { return g.severity == bw.Severity })
		if i < 0 {
			gs = append(gs, severityGroup{severity: bw.Severity})
			i = len(gs) - 1
		}
		gs[i].pairs = append(gs[i].pairs, bw)
	}
	if len(gs) == 0 {
		gs = append(gs, severityGroup{severity: o.Severity})
	}
	return gs
}

// Evaluate judges every objective on every known endpoint at now and
// returns the alerts whose state changed.
func (e *Engine) Evaluate(now time.Time) []Transition {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lastEval = now
	e.discover()
	out := e.retired
	e.retired = nil
	for _, r := range e.rules {
		o := &e.objs[r.obj]
		tr, changed := r.step(now, o, e.measure(r, now))
		if !changed {
			continue
		}
		if tr.To == Resolved {
			e.remember(tr.Alert)
		}
		out = append(out, tr)
	}
	return out
}

// discover creates rules for endpoints the store knows but no observation
// reached the engine for (the store may be fed without the engine).
func (e *Engine) discover() {
	if e.store == nil {
		return
	}
	for _, name := range e.store.EndpointNames() {
		e.ensure(name, feeds{probed: e.store.Probed(name), up: e.store.Has(name, telemetry.TargetUp)})
	}
}

func (e *Engine) remember(a Alert) {
	if len(e.history) >= e.opts.History {
		copy(e.history, e.history[1:])
		e.history = e.history[:len(e.history)-1]
	}
	e.history = append(e.history, a)
}

// staleAfter is how long a counter may go without news before its data is
// stale, by the store's rule: k refresh intervals, never below a floor.
func (e *Engine) staleAfter(interval time.Duration) time.Duration {
	return max(time.Duration(e.storeCfg.StaleIntervals*float64(interval)), e.storeCfg.MinStaleAfter)
}
