package monitor

import (
	"context"
	"strings"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/kube"
	"github.com/ttftop/ttftop/telemetry"
)

// PodWatch follows a cluster's model pods (kube.Cluster.Watch).
type PodWatch func(ctx context.Context, report func(kube.Change)) error

// PodEndpoint is how a pod is measured: its endpoint, as the pods found
// at start are.
type PodEndpoint func(kube.Pod) config.Endpoint

// AddPodWatch follows the model pods on the dashboard; found are those
// found at start, measured already. A pod that
// arrives later (a scale-up, a rollout's new pod) is measured from then
// on (AddEndpoint with endpoint's). One lost outside a rollout is DOWN
// when it starts terminating, then GONE once the API server no longer
// has it, as the fleet's replicas are (telemetry's LabelTarget and
// TargetUp); one rolled out is retired quietly with that reason; either
// way its probes and scrapes stop. A not-ready one carries its reason
// (kube.LabelNotReady) and, while not ready, its probes' outcomes do not
// count for or against its availability (notReadyProbe).
func (m *Monitor) AddPodWatch(source string, found []kube.Pod, watch PodWatch, endpoint PodEndpoint) {
	known := map[string]bool{}
	for _, p := range found {
		known[p.Key()] = true
		m.setNotReady(p.Key(), !p.Ready) // from the start, before the watch's first list
	}
	m.add(source, func(ctx context.Context) error {
		pw := &podWatcher{m: m, source: source, known: known, endpoint: endpoint, down: map[string]bool{}}
		pw.status(time.Now(), "")
		return watch(ctx, pw.change)
	})
}

// podWatcher turns one watch's pod changes into observations.
type podWatcher struct {
	m        *Monitor
	source   string
	known    map[string]bool // pods measured (found at start or added since)
	endpoint PodEndpoint
	down     map[string]bool // pods lost, said DOWN
}

func (pw *podWatcher) change(ch kube.Change) {
	now := time.Now()
	key := ch.Pod.Key()
	switch {
	case ch.Kind == kube.PodAdded || ch.Kind == kube.PodReady || ch.Kind == kube.PodNotReady:
		if ch.Kind == kube.PodAdded && pw.m.setLeft(key, pw.source, false) { // a StatefulSet's pod back under its name
			delete(pw.down, key)
			delete(pw.known, key)
			pw.label(key, now, telemetry.LabelTarget, "")
		}
		pw.m.setNotReady(key, !ch.Pod.Ready)
		pw.label(key, now, kube.LabelNotReady, ch.Pod.Reason)
		// Measured once it has an address: a pod just created has none
		// yet, and nothing can reach it.
		if !pw.known[key] && ch.Pod.IP != "" {
			pw.measure(ch.Pod, now)
		}
	case ch.RolledOut:
		if !pw.m.setLeft(key, pw.source, true) {
			return // said when it started terminating
		}
		pw.m.RetireEndpoint(key)
		for _, name := range pw.names(key) {
			pw.m.Observe(telemetry.Observation{Kind: telemetry.KindRetire, At: now, Endpoint: name, Source: pw.source, Err: ch.Why})
		}
	case ch.Kind == kube.PodLeaving || ch.Kind == kube.PodRemoved:
		pw.m.setLeft(key, pw.source, true)
		pw.m.RetireEndpoint(key)
		if !pw.down[key] {
			pw.down[key] = true
			pw.target(key, now, telemetry.TargetHealth{State: telemetry.TargetDown, Since: now, Reason: "pod " + ch.Why}, 0)
		}
		if ch.Kind == kube.PodRemoved {
			pw.target(key, now, telemetry.TargetHealth{State: telemetry.TargetGone, Since: now, Reason: "pod " + ch.Why + ", no longer in the API server"}, -1)
		}
	}
}

// measure starts a pod's probe and scrape; a failure is the watch's
// status.
func (pw *podWatcher) measure(pod kube.Pod, now time.Time) {
	if pw.endpoint == nil {
		return
	}
	if err := pw.m.AddEndpoint(pw.endpoint(pod)); err != nil {
		pw.status(now, "not measuring "+pod.Key()+": "+err.Error())
		return
	}
	pw.known[pod.Key()] = true
}

// rows are the pod's endpoints in the store: its key (a placeholder
// while its models are unknown), or the models probed on it
// ("ns/pod/model").
func (pw *podWatcher) rows(key string) []string {
	var out []string
	for _, n := range pw.m.Store.EndpointNames() {
		if ofEndpoint(n, key) {
			out = append(out, n)
		}
	}
	return out
}

// names are the pod's rows, or its key when it has none yet.
func (pw *podWatcher) names(key string) []string {
	if out := pw.rows(key); len(out) > 0 {
		return out
	}
	return []string{key}
}

// label sets a label of the pod's rows; a pod with none yet gets its
// labels from its endpoint's tags once measured.
func (pw *podWatcher) label(key string, at time.Time, label, value string) {
	pw.labelRows(pw.rows(key), at, label, value)
}

func (pw *podWatcher) labelRows(names []string, at time.Time, label, value string) {
	for _, name := range names {
		pw.m.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: name, Source: pw.source,
			Info: &telemetry.Endpoint{Name: name, Labels: map[string]string{label: value}}})
	}
}

// target says the pod's target health, on its key when it has no row;
// up < 0 is no data (GONE: there is nothing left to be up or not).
func (pw *podWatcher) target(key string, at time.Time, h telemetry.TargetHealth, up float64) {
	names := pw.names(key)
	pw.labelRows(names, at, telemetry.LabelTarget, telemetry.FormatTarget(h))
	for _, name := range names {
		o := telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: name, Source: pw.source, Signal: telemetry.TargetUp, Value: up}
		if up < 0 {
			o.Kind, o.Value = telemetry.KindNoData, 0
		}
		pw.m.Observe(o)
	}
}

// status is the watch's own source status, with a problem when there
// is one.
func (pw *podWatcher) status(at time.Time, problem string) {
	st := &telemetry.SourceStatus{Name: pw.source, Kind: "kube", State: telemetry.Live,
		Description: "watching the model pods: arrivals, rollouts, losses, readiness"}
	if problem != "" {
		st.State, st.Err = telemetry.Error, problem
	}
	pw.m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: pw.source, Status: st})
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
	watch, left := m.left[podOf(o.Endpoint)]
	return left && o.Source != watch
}

// setNotReady notes whether the API server says a pod is not ready.
func (m *Monitor) setNotReady(key string, notReady bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !notReady {
		delete(m.notReady, key)
		return
	}
	if m.notReady == nil {
		m.notReady = map[string]bool{}
	}
	m.notReady[key] = true
}

// notReadyProbe says whether o is a probe's observation of a pod the API
// server says is not ready (m.mu held). Its outcome (probe_success, the
// failure) is not counted: a Service sends such a pod no traffic, so
// its failures are not the replica's errors, nor is a success its
// availability; nor is its goodput judged. Its latencies, when it
// answers, are measured as any.
func (m *Monitor) notReadyProbe(o telemetry.Observation) bool {
	if len(m.notReady) == 0 || telemetry.SourceKindOf(o.Source) != telemetry.SourceProbe {
		return false
	}
	return m.notReady[podOf(o.Endpoint)]
}

// probeOutcome says whether o is a probe's success or failure.
func probeOutcome(o telemetry.Observation) bool {
	return o.Kind == telemetry.KindFailure || (o.Kind == telemetry.KindSample && o.Signal == telemetry.ProbeSuccess)
}

// podOf is the pod (namespace/name) of an endpoint named namespace/name
// or namespace/name/model.
func podOf(endpoint string) string {
	ns, rest, _ := strings.Cut(endpoint, "/")
	name, _, _ := strings.Cut(rest, "/")
	return ns + "/" + name
}
