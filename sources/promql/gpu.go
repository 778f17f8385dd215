package promql

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// GPU joins. DCGM series name no endpoint: each is the mean over the GPUs
// of one host or pod (gpuExpr). They are joined to the replicas they run
// on, never averaged over the fleet:
//
//  1. by pod: a replica with a pod label takes the GPU series of that pod
//     (dcgm-exporter's Kubernetes mapping: pod and namespace, or
//     exported_pod and exported_namespace when Prometheus renamed them);
//  2. by host: otherwise, the GPU series whose dcgm-exporter Hostname, or
//     whose instance host, is the replica's instance host (for a replica
//     with a pod label, only GPU series without one);
//  3. by Config.GroupBy: only for an endpoint without a host or pod
//     (aggregated by the grouping labels), the GPU series whose
//     grouping-label values are all set and equal the endpoint's; those
//     series must carry no host or pod either, unless a grouping label
//     names the place (instance, Hostname, pod, exported_pod). A replica
//     whose host or pod is known never joins by group, so never takes
//     another host's GPUs for sharing a namespace with them.
//
// An aggregate takes the GPU-weighted mean of what its replicas joined;
// for GPU power (summed over a host's or pod's GPUs by the query) every
// figure is instead the sum over the distinct series joined: power adds up.
// Power joined by host is the host's whole draw even where several models
// run there: it is never split by a guess, but stated as shared by those
// endpoints (gpuShareOf), and energy per token is then the host's.
// ttftop's exporter (probes) is never joined: a probe's host is not the
// model's.
// GPU series that join no endpoint, and endpoints that join none, are named
// in the source status.

// gpuGroup is one GPU series: a host's or pod's mean over n GPUs.
type gpuGroup struct {
	host, hostname, pod, namespace string
	groups                         []string
	value, n                       float64
	// age is the seconds since the first sample of its youngest energy
	// series (power only; NaN when not answered).
	age    float64
	joined bool
	// users are the replicas (and single endpoints) joined to it.
	users []*endpointState
}

// gpuValue is one endpoint's GPU figure; share is set when other
// endpoints use the same GPUs (summed signals only: power). age is the
// youngest age (seconds) of the energy series joined, NaN when unknown.
type gpuValue struct {
	value float64
	share *telemetry.GPUShare
	age   float64
}

// gpuMatch is what one endpoint joined, and by which rule ("pod", "host",
// "group").
type gpuMatch struct {
	groups []*gpuGroup
	rule   string
}

// joinGPU joins the GPU series of sig's answer to endpoints and returns
// each endpoint's value. For power, endpoints joined to the same GPUs
// (several models on one host, joined by host) each get the GPUs' whole
// power with the share stated, so that energy per token divides it by
// all their output tokens (telemetry.GPUShare).
func (rd *round) joinGPU(sig telemetry.Signal, vec model.Vector) map[*endpointState]gpuValue {
	groups := gpuGroups(vec, rd.reg.parser.groupBy)
	combine := weightedMean
	if gpuSummed(sig) {
		combine = sumGroups
	}
	out := map[*endpointState]gpuValue{}
	leaves := map[*endpointState]gpuMatch{}
	var unjoined []string
	for _, e := range rd.reg.all() {
		if len(e.members) > 0 || e.family == ttftopTag {
			continue
		}
		m := rd.gpuMatches(e, groups)
		if len(m.groups) == 0 {
			if e.aggregate != nil || len(rd.reg.parser.groupBy) > 0 {
				unjoined = append(unjoined, e.info.Name)
			}
			continue
		}
		leaves[e] = m
		for _, g := range m.groups {
			g.users = append(g.users, e)
		}
	}
	for e, m := range leaves {
		if v, ok := combine(m.groups); ok {
			out[e] = gpuValue{value: v, age: youngestAge(m.groups)}
		}
	}
	for _, e := range rd.reg.all() {
		if len(e.members) == 0 || e.family == ttftopTag {
			continue
		}
		set := map[*gpuGroup]bool{}
		var union []*gpuGroup
		rule := ""
		for _, m := range e.members {
			for _, g := range leaves[m].groups {
				if !set[g] {
					set[g] = true
					union = append(union, g)
				}
			}
			rule = cmp.Or(rule, leaves[m].rule)
		}
		if v, ok := combine(union); ok {
			out[e] = gpuValue{value: v, age: youngestAge(union)}
		}
		if len(union) > 0 {
			leaves[e] = gpuMatch{groups: union, rule: rule}
		}
	}
	if gpuSummed(sig) {
		for e, v := range out {
			v.share = gpuShareOf(e, leaves)
			out[e] = v
		}
	}
	rd.gpuWarnings(sig, groups, unjoined)
	return out
}

// gpuShareOf states the sharing of e's GPU series: the endpoints (replicas
// and single endpoints) joined to any of them, when any is not e or its
// own replica; nil otherwise (per-pod figures stay the pod's). Partial when one of those endpoints also
// uses GPU series that e does not (its tokens are then not all made on
// the GPUs whose power is counted).
func gpuShareOf(e *endpointState, matches map[*endpointState]gpuMatch) *telemetry.GPUShare {
	m := matches[e]
	mine := map[*gpuGroup]bool{}
	users := map[*endpointState]bool{}
	for _, g := range m.groups {
		mine[g] = true
		for _, u := range g.users {
			// dcgm-exporter's pod mapping says which pod uses a GPU: a
			// replica joined by pod shares it only with other pods named
			// there, not with a pod-less replica that took the whole host.
			if m.rule != "pod" || matches[u].rule == "pod" {
				users[u] = true
			}
		}
	}
	foreign := false
	for u := range users {
		foreign = foreign || u != e && u.aggregate != e
	}
	if !foreign {
		return nil
	}
	sh := &telemetry.GPUShare{Scope: m.rule}
	for u := range users {
		sh.Endpoints = append(sh.Endpoints, u.info.Name)
		for _, g := range matches[u].groups {
			sh.Partial = sh.Partial || !mine[g]
		}
	}
	sort.Strings(sh.Endpoints)
	sh.By = len(sh.Endpoints)
	return sh
}

// gpuMatches returns the GPU series e joins (see the rules above) and
// marks them joined.
func (rd *round) gpuMatches(e *endpointState, groups []*gpuGroup) gpuMatch {
	var out []*gpuGroup
	pick := func(ok func(g *gpuGroup) bool) {
		for _, g := range groups {
			if ok(g) {
				g.joined = true
				out = append(out, g)
			}
		}
	}
	if e.pod != "" {
		pick(func(g *gpuGroup) bool {
			return g.pod == e.pod && (g.namespace == "" || e.namespace == "" || g.namespace == e.namespace)
		})
		if len(out) > 0 {
			return gpuMatch{out, "pod"}
		}
	}
	if e.host != "" {
		pick(func(g *gpuGroup) bool {
			return (e.pod == "" || g.pod == "") && (g.host == e.host || g.hostname == e.host)
		})
		if len(out) > 0 {
			return gpuMatch{out, "host"}
		}
	}
	if len(rd.reg.parser.groupBy) > 0 && e.pod == "" && e.host == "" {
		// Neither side says where it runs (series aggregated by the
		// grouping labels): equal grouping labels are all there is. A
		// replica whose host or pod is known takes only GPUs there:
		// another host's, of the same namespace, are not its own.
		placed := groupsByPlace(rd.reg.parser.groupBy)
		pick(func(g *gpuGroup) bool {
			if !placed && (g.pod != "" || g.host != "" || g.hostname != "") {
				return false
			}
			for i, v := range g.groups {
				if v == "" || i >= len(e.groups) || e.groups[i] != v {
					return false
				}
			}
			return true
		})
	}
	return gpuMatch{out, "group"}
}

// groupsByPlace reports whether the grouping labels name where a series
// runs (instance, Hostname, pod): equal grouping labels are then the same
// host or pod.
func groupsByPlace(groupBy []string) bool {
	for _, l := range groupBy {
		switch l {
		case "instance", "Hostname", "pod", "exported_pod":
			return true
		}
	}
	return false
}

// gpuGroups reads the GPU series (values and, tagged
// ttftop_part="series", GPU counts) by their join labels.
func gpuGroups(vec model.Vector, groupBy []string) []*gpuGroup {
	byKey := map[string]*gpuGroup{}
	var order []string
	for _, smp := range vec {
		get := func(l string) string { return sanitize.Text(string(smp.Metric[model.LabelName(l)])) }
		g := gpuGroup{hostname: get("Hostname"), host: hostOf(get("instance")), pod: get("exported_pod"), namespace: get("exported_namespace"), n: 1, age: math.NaN()}
		if g.pod == "" {
			g.pod, g.namespace = get("pod"), get("namespace")
		}
		for _, l := range groupBy {
			g.groups = append(g.groups, get(l))
		}
		key := strings.Join(append([]string{g.hostname, g.host, g.pod, g.namespace}, g.groups...), "\x00")
		cur := byKey[key]
		if cur == nil {
			cur = &g
			cur.value = math.NaN()
			byKey[key] = cur
			order = append(order, key)
		}
		v := float64(smp.Value)
		switch smp.Metric[partTag] {
		case "series":
			if v > 0 {
				cur.n = v
			}
		case gpuAgePart:
			if finite(v) {
				cur.age = v
			}
		default:
			cur.value = v
		}
	}
	out := make([]*gpuGroup, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// youngestAge is the youngest energy-series age of the groups with a
// value; NaN when none is known.
func youngestAge(gs []*gpuGroup) float64 {
	age := math.NaN()
	for _, g := range gs {
		if finite(g.value) && finite(g.age) && (math.IsNaN(age) || g.age < age) {
			age = g.age
		}
	}
	return age
}

// weightedMean is the mean over every GPU of the groups.
func weightedMean(gs []*gpuGroup) (float64, bool) {
	var sum, n float64
	for _, g := range gs {
		if math.IsNaN(g.value) || math.IsInf(g.value, 0) {
			continue
		}
		sum += g.value * g.n
		n += g.n
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}

// gpuSummed reports whether sig's GPU series add up (power) rather than
// average (DRAM activity).
func gpuSummed(sig telemetry.Signal) bool { return sig == telemetry.GPUPower }

// sumGroups is the sum over the groups' values; groups without a value are
// left out, and none with one is no value (never 0).
func sumGroups(gs []*gpuGroup) (float64, bool) {
	var sum float64
	ok := false
	for _, g := range gs {
		if math.IsNaN(g.value) || math.IsInf(g.value, 0) {
			continue
		}
		sum += g.value
		ok = true
	}
	return sum, ok
}

// maxNamed caps the names listed in one warning.
const maxNamed = 3

func (rd *round) gpuWarnings(sig telemetry.Signal, groups []*gpuGroup, unjoined []string) {
	var orphans []string
	for _, g := range groups {
		if !g.joined {
			orphans = append(orphans, g.describe())
		}
	}
	sort.Strings(orphans)
	if len(orphans) > 0 {
		rd.warn(fmt.Sprintf("%s: GPU series of %s share no pod or host with any endpoint: not shown (never averaged over the fleet)",
			sig, listSome(orphans)))
	}
	if len(unjoined) > 0 {
		rd.warn(fmt.Sprintf("%s: no GPU series shares a pod or host with %s: no GPU figure there", sig, listSome(unjoined)))
	}
}

func (g *gpuGroup) describe() string {
	var where []string
	if g.pod != "" {
		where = append(where, "pod "+g.pod)
	}
	if g.hostname != "" {
		where = append(where, "Hostname "+g.hostname)
	}
	if g.host != "" {
		where = append(where, "host "+g.host)
	}
	if len(where) == 0 {
		return "a series without pod, Hostname or instance labels"
	}
	return strings.Join(where, " ")
}

func listSome(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}
