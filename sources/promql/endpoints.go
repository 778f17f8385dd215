package promql

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// seriesID is what a result series says about its endpoint. Label values
// are sanitised here, where they enter.
type seriesID struct {
	family string // ttftop_engine tag; "" when the query does not tag
	ident  string // endpoint, else the model
	model  string
	// modelFrom says where the model name came from, for engines without
	// a model label: "job label" or "config models".
	modelFrom string
	groups    []string // values of Config.GroupBy, in order
	role      string   // the first Config.RoleLabels value set: its pool
	// replicaKey holds the replica labels' values ("" at the aggregate
	// level: the series sums the model's replicas); replica is the one
	// shown, the first of them set (pod, else instance).
	replicaKey, replica string
	// Join labels of the replica (GPU joins).
	instance, pod, namespace string
}

// join reports whether the series names no endpoint (DCGM per host or pod:
// gpu.go joins it).
func (id seriesID) join() bool { return id.ident == "" }

func (id seriesID) aggregateKey() string {
	return id.family + "\x00" + id.ident + "\x00" + strings.Join(id.groups, "\x00") + "\x00" + id.role
}

// parser reads series identities.
type parser struct {
	fams     familyIndex
	groupBy  []string
	replicas []string // replica labels not in groupBy
	roles    []string
	models   map[string]string
}

// parse reads the identity of a result series.
func (p parser) parse(m model.Metric) seriesID {
	get := func(l string) string { return sanitize.Text(string(m[model.LabelName(l)])) }
	id := seriesID{family: get(engineTag)}
	f := p.fams[id.family]
	labels := []string{modelNameLabel, modelLabel}
	if f != nil {
		labels = f.modelLabels
	}
	for _, l := range labels {
		if v := get(l); v != "" {
			id.model = v
			break
		}
	}
	if f != nil && f.labelless() {
		id.model, id.modelFrom = p.labellessModel(get("job"))
	}
	id.ident = get(endpointLabel)
	if id.ident == "" {
		id.ident = id.model
	}
	for _, g := range p.groupBy {
		id.groups = append(id.groups, get(g))
	}
	for _, l := range p.roles {
		if id.role = get(l); id.role != "" {
			break
		}
	}
	var key []string
	for _, l := range p.replicas {
		v := get(l)
		key = append(key, v)
		if v != "" && id.replica == "" {
			id.replica = v
		}
	}
	if id.replica != "" {
		id.replicaKey = strings.Join(key, "\x00")
	}
	id.instance, id.pod, id.namespace = get("instance"), get("pod"), get("namespace")
	return id
}

// labellessModel names the model of an engine without a model label
// (TGI, llama.cpp): Config.Models by job, else the job. (By job, not
// instance: the aggregate's values are summed by the server per job.)
func (p parser) labellessModel(job string) (string, string) {
	if m, ok := p.models[job]; ok && job != "" {
		return sanitize.Text(m), "config models"
	}
	if job == "" {
		return "", ""
	}
	return job, "job label"
}

// endpointState is what the source remembers about one endpoint.
type endpointState struct {
	info   telemetry.Endpoint
	family string
	groups []string
	// seenHist and seenValue: signals that had a histogram window or an
	// instant value.
	seenHist, seenValue map[telemetry.Signal]bool
	// dataAt is the local time of its newest sample (freshness query).
	dataAt time.Time
	// newestSeen is the server time of the newest sample ever answered,
	// advancedAt the start of the refresh that last moved it on.
	newestSeen, advancedAt time.Time
	// newest is the server time of its newest sample in this refresh's
	// freshness answer; zero when the answer did not include it.
	newest time.Time
	// foundAt is the local start of the refresh that first found it: a
	// replica never in a freshness answer is retired MaxLag after it.
	foundAt time.Time
	// wasStopped: the last refresh found it stopped (lag.go);
	// stoppedAfter the server time of its newest sample then.
	wasStopped   bool
	stoppedAfter time.Time
	// target is a replica's identity as up names it (its replica key),
	// health what up said of it (targets.go).
	target string
	health targetHealth
	// processStart is its target's newest process_start_time_seconds
	// (processstart.go); 0 until one is seen.
	processStart float64
	// aggregate is a replica's aggregate; members an aggregate's replicas.
	aggregate *endpointState
	members   []*endpointState
	// host, pod and namespace join GPU series to a replica.
	host, pod, namespace string
}

// registry maps result series to endpoints with stable names: one
// aggregate per model (and GroupBy values), one endpoint per replica.
type registry struct {
	max    int
	parser parser
	byKey  map[string]*endpointState
	byName map[string]*endpointState
	// fresh collects endpoints created or changed since the last take, to
	// announce.
	fresh []*endpointState
	full  bool
}

func newRegistry(maxEndpoints int, p parser) *registry {
	return &registry{max: maxEndpoints, parser: p,
		byKey: map[string]*endpointState{}, byName: map[string]*endpointState{}}
}

// resolve returns the endpoints a series applies to, creating them on first
// sight: a replica's series feeds the replica and, with fanIn (histogram
// windows and freshness, which the source sums itself), its aggregate; a
// series without replica labels feeds the aggregate. Join series (no
// model) resolve to nothing.
func (r *registry) resolve(m model.Metric, fanIn bool) []*endpointState {
	id := r.parser.parse(m)
	if id.join() {
		return nil
	}
	agg := r.aggregate(id)
	if agg == nil || id.replicaKey == "" {
		if agg == nil {
			return nil
		}
		return []*endpointState{agg}
	}
	rep := r.replica(agg, id)
	switch {
	case rep == nil:
		return nil
	case fanIn:
		return []*endpointState{rep, agg}
	}
	return []*endpointState{rep}
}

func (r *registry) aggregate(id seriesID) *endpointState {
	key := id.aggregateKey()
	if e, ok := r.byKey[key]; ok {
		return e
	}
	if len(r.byKey) >= r.max {
		r.full = true
		return nil
	}
	var parts []string
	labels := map[string]string{}
	for i, g := range id.groups {
		if g != "" {
			parts = append(parts, g)
			labels[r.parser.groupBy[i]] = g
		}
	}
	ident := id.ident
	if id.role != "" {
		ident += " [" + id.role + "]" // one pool of a disaggregated model
		labels[telemetry.LabelRole] = id.role
	}
	name := r.unique(strings.Join(append(parts, ident), "/"), id.family)
	engine := telemetry.EngineUnknown
	if f, ok := r.parser.fams[id.family]; ok {
		engine = f.engine
	}
	if id.family != "" {
		labels["family"] = id.family
	}
	if id.modelFrom != "" {
		labels["model_from"] = id.modelFrom
	}
	if len(labels) == 0 {
		labels = nil
	}
	e := &endpointState{
		info: telemetry.Endpoint{Name: name, Model: id.model, Engine: engine, Labels: labels,
			Unmeasurable: engines.Unmeasurable(engine)},
		family: id.family, groups: id.groups,
		seenHist: map[telemetry.Signal]bool{}, seenValue: map[telemetry.Signal]bool{},
	}
	r.add(key, e)
	return e
}

func (r *registry) replica(agg *endpointState, id seriesID) *endpointState {
	key := id.aggregateKey() + "\x01" + id.replicaKey
	if e, ok := r.byKey[key]; ok {
		return e
	}
	if len(r.byKey) >= r.max {
		r.full = true
		return nil
	}
	var parts []string
	for _, g := range id.groups {
		if g != "" {
			parts = append(parts, g)
		}
	}
	name := r.unique(strings.Join(append(parts, id.replica, id.ident), "/"), id.family)
	labels := map[string]string{}
	for k, v := range agg.info.Labels {
		labels[k] = v
	}
	for k, v := range map[string]string{"instance": id.instance, "pod": id.pod, "namespace": id.namespace} {
		if v != "" {
			labels[k] = v
		}
	}
	e := &endpointState{
		info: telemetry.Endpoint{Name: name, Model: agg.info.Model, Engine: agg.info.Engine, Labels: labels,
			Group: agg.info.Name, Replica: id.replica, Unmeasurable: agg.info.Unmeasurable},
		family: id.family, groups: id.groups, aggregate: agg, target: id.replicaKey,
		seenHist: map[telemetry.Signal]bool{}, seenValue: map[telemetry.Signal]bool{},
	}
	if id.family != ttftopTag { // a probe's host is not the model's: no GPU join
		e.host, e.pod, e.namespace = hostOf(id.instance), id.pod, id.namespace
	}
	r.add(key, e)
	agg.members = append(agg.members, e)
	if !agg.info.Aggregate {
		agg.info.Aggregate = true
		r.fresh = append(r.fresh, agg) // announced again, now as an aggregate
	}
	return e
}

func (r *registry) add(key string, e *endpointState) {
	r.byKey[key] = e
	r.byName[e.info.Name] = e
	r.fresh = append(r.fresh, e)
}

// unique returns name, or a variant no endpoint has. Two families (say vLLM
// and a ttftop probe) may name the same model: the later one gets a
// suffix, and keeps it.
func (r *registry) unique(name, family string) string {
	if _, taken := r.byName[name]; taken && family != "" {
		name += "@" + family
	}
	for i, base := 2, name; ; i++ {
		if _, taken := r.byName[name]; !taken {
			return name
		}
		name = fmt.Sprintf("%s#%d", base, i)
	}
}

// hostOf is the host part of an instance label ("10.0.0.5:8000" →
// "10.0.0.5"); the label itself when it has no port.
func hostOf(instance string) string {
	if h, _, err := net.SplitHostPort(instance); err == nil {
		return h
	}
	return instance
}

// all returns the endpoints sorted by name.
func (r *registry) all() []*endpointState {
	out := make([]*endpointState, 0, len(r.byName))
	for _, e := range r.byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].info.Name < out[j].info.Name })
	return out
}

// takeFresh returns and forgets the endpoints to announce, each once.
func (r *registry) takeFresh() []*endpointState {
	f := r.fresh
	r.fresh = nil
	seen := map[*endpointState]bool{}
	out := f[:0]
	for _, e := range f {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// appliesHist and appliesValue report whether sig is expected from e as
// histogram windows or as an instant value: it had one before, or its
// family's default queries cover the signal that way and e has not had
// it the other way (a derived TPOT, Triton's mean E2E).
func (r *registry) appliesHist(e *endpointState, sig telemetry.Signal) bool {
	if e.seenHist[sig] {
		return true
	}
	f := r.parser.fams[e.family]
	return f != nil && f.hist[sig] && !e.seenValue[sig]
}

func (r *registry) appliesValue(e *endpointState, sig telemetry.Signal) bool {
	if e.seenValue[sig] {
		return true
	}
	f := r.parser.fams[e.family]
	return f != nil && f.value[sig] && !e.seenHist[sig]
}

// applies reports whether sig is expected from e either way.
func (r *registry) applies(e *endpointState, sig telemetry.Signal) bool {
	return r.appliesHist(e, sig) || r.appliesValue(e, sig)
}

// markDerived records on e's info, once, that sig is derived (label
// "<signal>_derived": the derivation's note), for the detail view and JSON.
func (r *registry) markDerived(e *endpointState, sig telemetry.Signal, tag string) {
	key := string(sig) + "_derived"
	if e.info.Labels[key] != "" {
		return
	}
	note := sanitize.Text(tag)
	for _, d := range engines.Derivations() {
		if d.Signal == sig && d.Tag == tag {
			note = d.Note
		}
	}
	if e.info.Labels == nil {
		e.info.Labels = map[string]string{}
	}
	e.info.Labels[key] = note
	r.fresh = append(r.fresh, e)
}

// clearDerived takes sig's derivation note off e's info once the engine's
// own figure of sig arrives (an engine upgraded in place to one with the
// histogram), so that the figure is not called derived for ever: the label
// is announced empty, which the store reads as gone.
func (r *registry) clearDerived(e *endpointState, sig telemetry.Signal) {
	key := string(sig) + "_derived"
	if e.info.Labels[key] == "" {
		return
	}
	e.info.Labels[key] = ""
	r.fresh = append(r.fresh, e)
}

// setLabel sets e's label key to value, "" taking it off (announced
// empty, which the store reads as gone); e is announced when it changes.
func (r *registry) setLabel(e *endpointState, key, value string) {
	if e.info.Labels[key] == value {
		return
	}
	if e.info.Labels == nil {
		e.info.Labels = map[string]string{}
	}
	e.info.Labels[key] = value
	r.fresh = append(r.fresh, e)
}

// retire forgets a replica (a pod replaced in a rollout): it leaves its
// aggregate, and comes back as a new endpoint if its series do.
func (r *registry) retire(e *endpointState) {
	for k, v := range r.byKey {
		if v == e {
			delete(r.byKey, k)
		}
	}
	delete(r.byName, e.info.Name)
	if agg := e.aggregate; agg != nil {
		agg.members = slices.DeleteFunc(agg.members, func(m *endpointState) bool { return m == e })
	}
}
