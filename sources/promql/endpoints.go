package promql

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/tokentop/tokentop/sanitize"
	"github.com/tokentop/tokentop/telemetry"
)

// seriesID is what a result series says about its endpoint. Label values
// are sanitised here, where they enter.
type seriesID struct {
	family string // tokentop_engine tag; "" when the query does not tag
	ident  string // endpoint, else model_name, else model label
	model  string
	groups []string // values of Config.GroupBy, in order
}

// join reports whether the series names no endpoint: it then applies to
// every endpoint with the same grouping-label values (DCGM per node).
func (id seriesID) join() bool { return id.ident == "" }

func (id seriesID) key() string {
	return id.family + "\x00" + id.ident + "\x00" + strings.Join(id.groups, "\x00")
}

// parseSeries reads the identity of a result series.
func parseSeries(m model.Metric, groupBy []string) seriesID {
	get := func(l string) string { return sanitize.Text(string(m[model.LabelName(l)])) }
	id := seriesID{family: get(engineTag), model: get(modelNameLabel)}
	if id.model == "" {
		id.model = get(modelLabel)
	}
	id.ident = get(endpointLabel)
	if id.ident == "" {
		id.ident = id.model
	}
	for _, g := range groupBy {
		id.groups = append(id.groups, get(g))
	}
	return id
}

// endpointState is what the source remembers about one endpoint.
type endpointState struct {
	info   telemetry.Endpoint
	family string
	groups []string
	seen   map[telemetry.Signal]bool
	// dataAt is the local time of its newest sample (freshness query).
	dataAt time.Time
	// newest is the server time of its newest sample in this refresh's
	// freshness answer; zero when the answer did not include it.
	newest time.Time
}

// registry maps result series to endpoints with stable names.
type registry struct {
	max     int
	groupBy []string
	fams    familySet
	byKey   map[string]*endpointState
	byName  map[string]*endpointState
	// fresh collects endpoints created since the last take, to announce.
	fresh []*endpointState
	full  bool
}

func newRegistry(maxEndpoints int, groupBy []string, fams familySet) *registry {
	return &registry{max: maxEndpoints, groupBy: groupBy, fams: fams,
		byKey: map[string]*endpointState{}, byName: map[string]*endpointState{}}
}

// resolve returns the endpoints a series applies to, creating the endpoint
// of an identified series on first sight.
func (r *registry) resolve(m model.Metric) []*endpointState {
	id := parseSeries(m, r.groupBy)
	if id.join() {
		return r.matching(id.groups)
	}
	if e, ok := r.byKey[id.key()]; ok {
		return []*endpointState{e}
	}
	if len(r.byKey) >= r.max {
		r.full = true
		return nil
	}
	e := r.create(id)
	r.byKey[id.key()] = e
	r.byName[e.info.Name] = e
	r.fresh = append(r.fresh, e)
	return []*endpointState{e}
}

func (r *registry) create(id seriesID) *endpointState {
	var parts []string
	labels := map[string]string{}
	for i, g := range id.groups {
		if g != "" {
			parts = append(parts, g)
			labels[r.groupBy[i]] = g
		}
	}
	name := strings.Join(append(parts, id.ident), "/")
	// Two families (say vLLM and a tokentop probe) may name the same
	// model: the later one gets a suffix, and keeps it.
	if _, taken := r.byName[name]; taken && id.family != "" {
		name += "@" + id.family
	}
	for i, base := 2, name; ; i++ {
		if _, taken := r.byName[name]; !taken {
			break
		}
		name = fmt.Sprintf("%s#%d", base, i)
	}
	engine := telemetry.EngineUnknown
	if f, ok := r.fams[id.family]; ok {
		engine = f.engine
	}
	if id.family != "" {
		labels["family"] = id.family
	}
	if len(labels) == 0 {
		labels = nil
	}
	return &endpointState{
		info:   telemetry.Endpoint{Name: name, Model: id.model, Engine: engine, Labels: labels},
		family: id.family,
		groups: id.groups,
		seen:   map[telemetry.Signal]bool{},
	}
}

// matching returns the endpoints whose grouping-label values equal groups;
// with no grouping labels, every endpoint.
func (r *registry) matching(groups []string) []*endpointState {
	var out []*endpointState
	for _, e := range r.all() {
		if slices.Equal(e.groups, groups) {
			out = append(out, e)
		}
	}
	return out
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

// takeFresh returns and forgets the endpoints created since the last call.
func (r *registry) takeFresh() []*endpointState {
	f := r.fresh
	r.fresh = nil
	return f
}

// applies reports whether sig is expected from e: it had a value before,
// or its family's default queries cover the signal.
func (r *registry) applies(e *endpointState, sig telemetry.Signal) bool {
	return e.seen[sig] || r.fams.supports(e.family, sig)
}
