package monitor

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/ttftop/ttftop/sources/kube"
	"github.com/ttftop/ttftop/telemetry"
)

// PodWatch follows a cluster's model pods (kube.Cluster.Watch).
type PodWatch func(ctx context.Context, report func(kube.Change)) error

// AddPodWatch says on the dashboard what the changes of the model pods
// found at start (known, by namespace/name) mean: one lost outside a
// rollout is DOWN when it starts terminating, then GONE once the API
// server no longer has it, as the fleet's replicas are (telemetry's
// LabelTarget and TargetUp); one rolled out is retired quietly with
// that reason; a not-ready one carries its reason (kube.LabelNotReady).
// Either way its probes and scrapes are no longer shown. The monitor
// adds no source while it runs: a pod that arrives later is named in
// the watch's status, measured after a restart.
func (m *Monitor) AddPodWatch(source string, known map[string]bool, watch PodWatch) {
	m.add(source, func(ctx context.Context) error {
		pw := &podWatcher{m: m, source: source, known: known, down: map[string]bool{}}
		pw.status(time.Now())
		return watch(ctx, pw.change)
	})
}

// podWatcher turns one watch's pod changes into observations.
type podWatcher struct {
	m       *Monitor
	source  string
	known   map[string]bool
	down    map[string]bool // pods lost, said DOWN
	arrived []string        // pods found after start, not measured
}

func (pw *podWatcher) change(ch kube.Change) {
	now := time.Now()
	key := ch.Pod.Key()
	switch {
	case ch.Kind == kube.PodAdded && !pw.known[key]:
		pw.arrived = append(pw.arrived, key)
		pw.status(now)
	case ch.Kind == kube.PodAdded:
		if pw.m.setLeft(key, pw.source, false) { // a StatefulSet's pod back under its name
			delete(pw.down, key)
			pw.label(key, now, telemetry.LabelTarget, "")
		}
		pw.label(key, now, kube.LabelNotReady, ch.Pod.Reason)
	case ch.Kind == kube.PodReady || ch.Kind == kube.PodNotReady:
		pw.label(key, now, kube.LabelNotReady, ch.Pod.Reason)
	case ch.RolledOut:
		if !pw.m.setLeft(key, pw.source, true) {
			return // said when it started terminating
		}
		for _, name := range pw.names(key) {
			pw.m.Observe(telemetry.Observation{Kind: telemetry.KindRetire, At: now, Endpoint: name, Source: pw.source, Err: ch.Why})
		}
	case ch.Kind == kube.PodLeaving || ch.Kind == kube.PodRemoved:
		pw.m.setLeft(key, pw.source, true)
		if !pw.down[key] {
			pw.down[key] = true
			pw.target(key, now, telemetry.TargetHealth{State: telemetry.TargetDown, Since: now, Reason: "pod " + ch.Why}, 0)
		}
		if ch.Kind == kube.PodRemoved {
			pw.target(key, now, telemetry.TargetHealth{State: telemetry.TargetGone, Since: now, Reason: "pod " + ch.Why + ", no longer in the API server"}, -1)
		}
	}
}

// names are the pod's endpoints: the pod's key, or the models probed on
// it ("ns/pod/model").
func (pw *podWatcher) names(key string) []string {
	var out []string
	for _, n := range pw.m.Store.EndpointNames() {
		if n == key || strings.HasPrefix(n, key+"/") {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []string{key}
	}
	return out
}

func (pw *podWatcher) label(key string, at time.Time, label, value string) {
	for _, name := range pw.names(key) {
		pw.m.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: name, Source: pw.source,
			Info: &telemetry.Endpoint{Name: name, Labels: map[string]string{label: value}}})
	}
}

// target says the pod's target health; up < 0 is no data (GONE: there
// is nothing left to be up or not).
func (pw *podWatcher) target(key string, at time.Time, h telemetry.TargetHealth, up float64) {
	pw.label(key, at, telemetry.LabelTarget, telemetry.FormatTarget(h))
	for _, name := range pw.names(key) {
		o := telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: name, Source: pw.source, Signal: telemetry.TargetUp, Value: up}
		if up < 0 {
			o.Kind, o.Value = telemetry.KindNoData, 0
		}
		pw.m.Observe(o)
	}
}

// status is the watch's own source status, naming the pods that arrived
// since start.
func (pw *podWatcher) status(at time.Time) {
	desc := "watching the model pods: rollouts, losses, readiness"
	if len(pw.arrived) > 0 {
		sort.Strings(pw.arrived)
		desc += "; arrived since start, measured after a restart: " + strings.Join(pw.arrived, ", ")
	}
	pw.m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: pw.source,
		Status: &telemetry.SourceStatus{Name: pw.source, Kind: "kube", State: telemetry.Live, Description: desc}})
}

// setLeft marks a pod left (its endpoints' observations from sources
// other than its watch are dropped from then on) or back; it says
// whether that changed anything.
func (m *Monitor) setLeft(key, watch string, left bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, was := m.left[key]; was == left {
		return false
	}
	if m.left == nil {
		m.left = map[string]string{}
	}
	if left {
		m.left[key] = watch
	} else {
		delete(m.left, key)
	}
	return true
}

// leftPod says whether o is of a pod that left, from a source other
// than its watch (m.mu held). A pod's endpoints are namespace/name or
// namespace/name/model.
func (m *Monitor) leftPod(o telemetry.Observation) bool {
	if len(m.left) == 0 {
		return false
	}
	ns, rest, _ := strings.Cut(o.Endpoint, "/")
	name, _, _ := strings.Cut(rest, "/")
	watch, left := m.left[ns+"/"+name]
	return left && o.Source != watch
}
