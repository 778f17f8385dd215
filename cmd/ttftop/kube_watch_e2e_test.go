//go:build integration

package main

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ttftop/ttftop/internal/kubetest"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/sources/kube"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/telemetry/telemetrytest"
)

// runKube runs m until the test ends (at most 2 minutes) and returns
// until, which polls m's store into *snap until cond holds, failing at
// the deadline with what the store and stderr hold.
func runKube(t *testing.T, m *monitor.Monitor, stderr *syncbuf.Buffer) (until func(what string, cond func() bool), snap *telemetry.Snapshot) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	snap = &telemetry.Snapshot{}
	until = func(what string, cond func() bool) {
		t.Helper()
		for ctx.Err() == nil {
			if *snap = m.Store.Snapshot(time.Now(), time.Minute); cond() {
				return
			}
			time.Sleep(50 * time.Millisecond) // polling the store, bounded by ctx
		}
		t.Fatalf("%s: not within the deadline\nendpoints %+v\nsources %+v\n%s", what, snap.Endpoints, snap.Sources, stderr.String())
	}
	return until, snap
}

// TestKubeWatchShowsLostAndRolledOutPods: with `--kube`, a replica
// deleted outside a rollout reads DOWN while it terminates, then GONE
// once the API server no longer has it; an old revision's pod deleted
// after a new ReplicaSet of its Deployment has a ready pod is retired,
// no failure shown and no row left; a pod in CrashLoopBackOff carries
// its reason until it is ready again; the new revision's pod, created
// while the monitor runs, is probed and scraped under its Deployment.
func TestKubeWatchShowsLostAndRolledOutPods(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, "llm")
	n := kubetest.NewNetNS(t)
	n.Serve(t, 8000, simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler())
	oldRS := c.Deployment(t, "llm", "qwen", "5d4f8")
	run := func(name string, owner *metav1.OwnerReference, ip string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "llm", Labels: map[string]string{"app.kubernetes.io/name": "vllm"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}}}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return c.RunPod(t, p, kubetest.Status{IP: ip})
	}
	run("qwen-5d4f8-a", &oldRS, n.IP)
	run("qwen-5d4f8-b", &oldRS, n.IP)
	other := run("other", nil, n.IP) // probed throughout: its probes pace the checks

	m, stderr := openKube(t, c, "--interval", "300ms", "--max-tokens", "4")
	until, snap := runKube(t, m, stderr)
	endpoint := func(pod string) (telemetry.EndpointSnapshot, bool) {
		for _, ep := range snap.Endpoints {
			if strings.HasPrefix(ep.Name, "llm/"+pod+"/") {
				return ep, true
			}
		}
		return telemetry.EndpointSnapshot{}, false
	}
	probed := func(pod string) float64 {
		ep, _ := endpoint(pod)
		return ep.Signals[telemetry.TTFT].Count
	}
	until("every pod probed", func() bool { return probed("qwen-5d4f8-a") > 0 && probed("qwen-5d4f8-b") > 0 && probed("other") > 0 })

	notReady := func(pod string) string { ep, _ := endpoint(pod); return ep.Labels[kube.LabelNotReady] }
	c.SetStatus(t, other, kubetest.Status{IP: n.IP, Waiting: "CrashLoopBackOff", Message: "back-off 40s restarting failed container", Restarts: 2})
	until("crashing pod's reason shown", func() bool { return strings.HasPrefix(notReady("other"), "CrashLoopBackOff: back-off 40s") })
	c.SetStatus(t, other, kubetest.Status{IP: n.IP})
	until("ready pod's reason gone", func() bool { return notReady("other") == "" })

	del := func(name string, grace *int64) {
		if err := c.Client.CoreV1().Pods("llm").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
			t.Fatal(err)
		}
	}
	health := func(pod string) telemetry.TargetHealth {
		ep, _ := endpoint(pod)
		h, _ := ep.Target()
		return h
	}
	del("qwen-5d4f8-a", nil) // terminating: no kubelet ends it here
	until("lost pod DOWN", func() bool {
		h := health("qwen-5d4f8-a")
		return h.State == telemetry.TargetDown && h.Reason == "pod deleted outside a rollout"
	})
	zero := int64(0)
	del("qwen-5d4f8-a", &zero)
	until("lost pod GONE", func() bool { return health("qwen-5d4f8-a").State == telemetry.TargetGone })

	// A rollout's new pod, at its own address with its own simulator, is
	// probed and scraped through the proxy under its Deployment, the
	// monitor still running.
	newRS := c.Deployment(t, "llm", "qwen", "7c9b2")
	n2 := kubetest.NewNetNS(t)
	n2.Serve(t, 8000, simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler())
	run("qwen-7c9b2-c", &newRS, n2.IP)
	until("new pod probed and scraped", func() bool {
		ep, ok := endpoint("qwen-7c9b2-c")
		return ok && ep.Signals[telemetry.TTFT].Count > 0 && strings.Contains(ep.Signals[telemetry.TTFT].Source, "/pods/qwen-7c9b2-c:8000/proxy/") &&
			strings.Contains(ep.Server[telemetry.TTFT].Source, "/pods/qwen-7c9b2-c:8000/proxy/") && ep.Labels[kube.LabelOwner] == "Deployment qwen"
	})
	del("qwen-5d4f8-b", &zero)
	until("rolled-out pod retired", func() bool { _, ok := endpoint("qwen-5d4f8-b"); return !ok })
	// Its probe still runs; two more probes of the other pod later, the
	// rolled-out pod has not come back as a failing row.
	after := probed("other")
	until("two more probes of the other pod", func() bool { return probed("other") >= after+2 })
	if ep, ok := endpoint("qwen-5d4f8-b"); ok {
		t.Errorf("rolled-out pod back on the dashboard: %+v", ep)
	}
	if h := health("qwen-5d4f8-a"); h.State != telemetry.TargetGone {
		t.Errorf("lost pod no longer GONE after more probes: %+v", h)
	}
}

// TestKubeWatchFollowsStatefulSetRollout: a StatefulSet's pod replaced
// under its name in a rolling update (its StatefulSet updating to a new
// revision) leaves quietly, retired as rolled out, never DOWN or
// failed; the same name at the new revision, at a new address with its
// own simulator, is probed and scraped again under its StatefulSet.
func TestKubeWatchFollowsStatefulSetRollout(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, "llm")
	oldNS, newNS := kubetest.NewNetNS(t), kubetest.NewNetNS(t)
	oldNS.Serve(t, 8000, simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler())
	newNS.Serve(t, 8000, simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler())
	sts := c.StatefulSet(t, "llm", "qwen")
	c.StatefulSetRevisions(t, "llm", "qwen", "qwen-5d4f8", "qwen-5d4f8")
	run := func(revision, ip string) {
		c.RunPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "qwen-0", Namespace: "llm", OwnerReferences: []metav1.OwnerReference{sts},
			Labels: map[string]string{"app.kubernetes.io/name": "vllm", "controller-revision-hash": revision}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}}}}, kubetest.Status{IP: ip})
	}
	run("qwen-5d4f8", oldNS.IP)

	m, stderr := openKube(t, c, "--interval", "300ms", "--max-tokens", "4")
	seen := &telemetrytest.Collector{}
	m.AddSink(seen)
	until, snap := runKube(t, m, stderr)
	row := func() (telemetry.EndpointSnapshot, bool) {
		for _, ep := range snap.Endpoints {
			if strings.HasPrefix(ep.Name, "llm/qwen-0/") || ep.Name == "llm/qwen-0" {
				return ep, true
			}
		}
		return telemetry.EndpointSnapshot{}, false
	}
	measured := func() bool {
		ep, ok := row()
		return ok && ep.Signals[telemetry.TTFT].Count > 0 && ep.Server[telemetry.TTFT].Source != "" && ep.Labels[kube.LabelOwner] == "StatefulSet qwen"
	}
	until("qwen-0 measured", measured)

	rollout := len(seen.All())
	c.StatefulSetRevisions(t, "llm", "qwen", "qwen-5d4f8", "qwen-7c9b2")
	if err := c.Client.CoreV1().Pods("llm").Delete(context.Background(), "qwen-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	until("old qwen-0 retired", func() bool { _, ok := row(); return !ok })
	zero := int64(0)
	if err := c.Client.CoreV1().Pods("llm").Delete(context.Background(), "qwen-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	// Rows are gone; the new pod's come from its own probe and scrape.
	created := time.Now()
	run("qwen-7c9b2", newNS.IP)
	until("new qwen-0 measured", measured)
	if ep, _ := row(); ep.Signals[telemetry.TTFT].P50 != nil && ep.Server[telemetry.TTFT].Mean != nil {
		t.Logf("new qwen-0 measured %v after it was created: %s client TTFT p50 %.1f ms over %v probes (through the proxy), server TTFT mean %.1f ms",
			time.Since(created).Round(time.Millisecond), ep.Name, *ep.Signals[telemetry.TTFT].P50, ep.Signals[telemetry.TTFT].Count, *ep.Server[telemetry.TTFT].Mean)
	}
	if ep, _ := row(); ep.Labels[telemetry.LabelTarget] != "" {
		t.Errorf("new qwen-0 carries a target health: %q", ep.Labels[telemetry.LabelTarget])
	}

	// Until it is retired, the old pod is never shown failing or down;
	// from then on the rows are the new pod's.
	retired := false
	for _, o := range seen.All()[rollout:] {
		if !strings.HasPrefix(o.Endpoint, "llm/qwen-0") {
			continue
		}
		if o.Kind == telemetry.KindRetire && !retired {
			want := "rolled out: StatefulSet qwen is updating to revision qwen-7c9b2 (the pod ran revision qwen-5d4f8)"
			if o.Err != want {
				t.Errorf("retired with %q, want %q", o.Err, want)
			}
			retired = true
		}
		if !retired && (o.Kind == telemetry.KindFailure || o.Kind == telemetry.KindSample && o.Signal == telemetry.TargetUp && o.Value == 0) {
			t.Errorf("old qwen-0 shown failing or down in its rollout: %+v", o)
		}
	}
	if !retired {
		t.Error("old qwen-0 never retired")
	}
}

// TestKubeNotReadyPodsFailedProbesNotCounted: while the API server says
// a pod is not ready (CrashLoopBackOff), its failed probes are recorded
// in its probe log but are not its errors (no probe_success 0, no
// failure, no goodput judged), and its rows say why; once it is ready
// again, a failed probe counts.
func TestKubeNotReadyPodsFailedProbesNotCounted(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, "llm")
	n := kubetest.NewNetNS(t)
	h := simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler()
	var failing atomic.Bool
	n.Serve(t, 8000, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() && r.URL.Path != "/metrics" {
			http.Error(w, "the model server is restarting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	pod := c.RunPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vllm-0", Namespace: "llm", Labels: map[string]string{"app.kubernetes.io/name": "vllm"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}}}}, kubetest.Status{IP: n.IP})

	m, stderr := openKube(t, c, "--interval", "300ms", "--max-tokens", "4")
	seen := &telemetrytest.Collector{}
	m.AddSink(seen)
	until, snap := runKube(t, m, stderr)
	notReady := func() (string, bool) {
		for _, ep := range snap.Endpoints {
			if strings.HasPrefix(ep.Name, "llm/vllm-0/") && ep.Signals[telemetry.TTFT].Count > 0 {
				return ep.Labels[kube.LabelNotReady], true
			}
		}
		return "", false
	}
	// since counts the probes of vllm-0 that failed, and those counted as
	// failures (probe_success 0, a failure, goodput 0), from index from.
	since := func(from int) (failedProbes, counted int) {
		for _, o := range seen.All()[from:] {
			if !strings.HasPrefix(o.Endpoint, "llm/vllm-0") || telemetry.SourceKindOf(o.Source) != telemetry.SourceProbe {
				continue
			}
			switch {
			case o.Kind == telemetry.KindProbe && o.Probe != nil && o.Probe.Error != "":
				failedProbes++
			case o.Kind == telemetry.KindFailure, o.Kind == telemetry.KindSample && (o.Signal == telemetry.ProbeSuccess || o.Signal == telemetry.Goodput) && o.Value == 0:
				counted++
			}
		}
		return failedProbes, counted
	}
	until("vllm-0 probed, ready", func() bool { r, ok := notReady(); return ok && r == "" })

	c.SetStatus(t, pod, kubetest.Status{IP: n.IP, Waiting: "CrashLoopBackOff", Message: "back-off 40s restarting failed container", Restarts: 2})
	until("not-ready reason shown", func() bool { r, _ := notReady(); return strings.HasPrefix(r, "CrashLoopBackOff: back-off 40s") })
	from := len(seen.All())
	failing.Store(true)
	until("three failed probes while not ready", func() bool { f, _ := since(from); return f >= 3 })
	if f, counted := since(from); counted > 0 {
		t.Errorf("a not-ready pod's %d failed probes counted as its errors (%d observations)", f, counted)
	}

	c.SetStatus(t, pod, kubetest.Status{IP: n.IP})
	until("ready again", func() bool { r, _ := notReady(); return r == "" })
	from = len(seen.All())
	until("a failed probe of a ready pod counted", func() bool { _, counted := since(from); return counted > 0 })
}

// TestKubeWatchRefusedByRBACOnTheDashboard: a user who may list pods and
// reach them through the proxy, but not watch them, sees the pods
// measured as found and the watch's source in error, naming the verb and
// resource to grant.
func TestKubeWatchRefusedByRBACOnTheDashboard(t *testing.T) {
	c := kubetest.Start(t, "viewer")
	c.Namespace(t, "llm")
	c.Grant(t, "viewer", "llm",
		rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		rbacv1.PolicyRule{Verbs: []string{"get", "create"}, APIGroups: []string{""}, Resources: []string{"pods/proxy"}})
	n := kubetest.NewNetNS(t)
	n.Serve(t, 8000, simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler())
	c.RunPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vllm-0", Namespace: "llm", Labels: map[string]string{"app.kubernetes.io/name": "vllm"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}}}}, kubetest.Status{IP: n.IP})

	m, stderr := openKubeAs(t, c, "viewer", "--interval", "300ms", "--max-tokens", "4")
	until, snap := runKube(t, m, stderr)
	want := `kube: RBAC: missing permission to watch pods in namespace llm (grant verb "watch" on resource "pods")`
	until("the watch's refusal said and the pod measured", func() bool {
		said, measured := false, false
		for _, s := range snap.Sources {
			said = said || (s.Name == "kube:kubetest" && s.State == telemetry.Error && strings.Contains(s.Err, want))
		}
		for _, ep := range snap.Endpoints {
			measured = measured || (strings.HasPrefix(ep.Name, "llm/vllm-0/") && ep.Signals[telemetry.TTFT].Count > 0)
		}
		return said && measured
	})
}
