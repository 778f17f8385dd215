//go:build integration

package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ttftop/ttftop/internal/kubetest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/kube"
)

const ns = "llm"

// pod builds a pod spec: labels, one container's image and named ports.
func pod(name string, labels map[string]string, image string, ports ...corev1.ContainerPort) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: image, Ports: ports}}}}
}

// simulator serves a vLLM simulator in a network namespace on :8000 and
// returns the namespace (its IP is the pods' IP).
func simulator(t *testing.T) *kubetest.NetNS {
	t.Helper()
	n := kubetest.NewNetNS(t)
	n.Serve(t, 8000, simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler())
	return n
}

// connect opens the cluster as user through a kubeconfig, as --kube does.
func connect(t *testing.T, c *kubetest.Cluster, user string) *kube.Cluster {
	t.Helper()
	cl, err := kube.Connect(kube.Settings{Enabled: true, Kubeconfig: c.Kubeconfig(t, user, "test-ctx", ns)})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func discover(t *testing.T, cl *kube.Cluster) kube.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := cl.Discover(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func byName(r kube.Result) map[string]kube.Pod {
	out := map[string]kube.Pod{}
	for _, p := range r.Pods {
		out[p.Name] = p
	}
	return out
}

// TestKubeDiscoverConventionsAndScrapeThroughProxy: pods of every convention
// are found with their engine, role and owner, and the simulator behind
// their IP answers /metrics through the API server's pods/proxy.
func TestKubeDiscoverConventionsAndScrapeThroughProxy(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	n := simulator(t)
	http8000 := corev1.ContainerPort{Name: "http", ContainerPort: 8000}
	for _, p := range []*corev1.Pod{
		pod("llmd-prefill", map[string]string{"llm-d.ai/role": "prefill", "llm-d.ai/engine-type": "vllm"}, "ghcr.io/llm-d/llm-d:v0.3", http8000),
		pod("kserve-pred", map[string]string{"serving.kserve.io/inferenceservice": "llama"}, "vllm/vllm-openai:v0.11.0"),
		pod("lws-0", map[string]string{"leaderworkerset.sigs.k8s.io/name": "big", "leaderworkerset.sigs.k8s.io/worker-index": "0"}, "vllm/vllm-openai:v0.11.0"),
		pod("lws-0-1", map[string]string{"leaderworkerset.sigs.k8s.io/name": "big", "leaderworkerset.sigs.k8s.io/worker-index": "1"}, "vllm/vllm-openai:v0.11.0"),
		pod("nim", map[string]string{"app.kubernetes.io/managed-by": "k8s-nim-operator"}, "nvcr.io/nim/meta/llama3-8b-instruct:1.0"),
		pod("dynamo-fe", map[string]string{"nvidia.com/dynamo-component-type": "frontend"}, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6"),
		pod("app-vllm", map[string]string{"app.kubernetes.io/name": "vllm"}, "registry.local/server:1", http8000),
		pod("by-image", nil, "vllm/vllm-openai:v0.11.0"),
		pod("postgres", map[string]string{"app.kubernetes.io/name": "postgres"}, "postgres:17"),
	} {
		c.RunPod(t, p, kubetest.Status{IP: n.IP})
	}
	cl := connect(t, c, kubetest.Admin)
	r := discover(t, cl)
	found := byName(r)
	want := map[string]struct{ convention, role, owner string }{
		"llmd-prefill": {"llm-d.ai/role=prefill", "prefill", "Pod llmd-prefill"},
		"kserve-pred":  {"serving.kserve.io/inferenceservice=llama", "", "InferenceService llama"},
		"lws-0":        {"leaderworkerset.sigs.k8s.io/worker-index=0 (leader)", "", "LeaderWorkerSet big"},
		"nim":          {"app.kubernetes.io/managed-by=k8s-nim-operator", "", "Pod nim"},
		"dynamo-fe":    {"nvidia.com/dynamo-component-type=frontend", "", "Pod dynamo-fe"},
		"app-vllm":     {"app.kubernetes.io/name=vllm", "", "Pod app-vllm"},
		"by-image":     {"image vllm/vllm-openai:v0.11.0", "", "Pod by-image"},
	}
	if len(found) != len(want) {
		t.Errorf("found %d pods, want %d:\n%s", len(found), len(want), strings.Join(r.Describe(), "\n"))
	}
	for name, w := range want {
		p, ok := found[name]
		if !ok {
			t.Errorf("%s not found:\n%s", name, strings.Join(r.Describe(), "\n"))
			continue
		}
		if p.Convention != w.convention || p.Role != w.role || p.Owner != w.owner || !p.Ready || p.IP != n.IP || p.Node != "node-1" {
			t.Errorf("%s: %+v; want convention %q role %q owner %q, ready, IP %s on node-1", name, p, w.convention, w.role, w.owner, n.IP)
		}
	}
	if !strings.Contains(strings.Join(r.Describe(), "\n"), "left alone llm/lws-0-1: worker 1 of LeaderWorkerSet big") {
		t.Errorf("the LWS worker is not said to be left alone:\n%s", strings.Join(r.Describe(), "\n"))
	}

	// Through the API server's pod proxy, as scrapes and probes go.
	hc, err := httpclient.New(httpclient.Config{Transport: cl.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	p := found["app-vllm"]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := hc.Get(ctx, cl.URL(ns, p.Name, p.IP, p.Metrics.Number)+p.Metrics.Path, "text/plain")
	if err != nil {
		t.Fatalf("GET /metrics through the pod proxy: %v", err)
	}
	if !strings.Contains(resp.Body, "vllm:num_requests_running") {
		t.Errorf("the proxied /metrics is not the simulator's:\n%.400s", resp.Body)
	}
	if u := cl.URL(ns, p.Name, p.IP, 8000); !strings.HasPrefix(u, c.Host+"/api/v1/namespaces/llm/pods/app-vllm:8000/proxy") {
		t.Errorf("URL %s is not the pod proxy", u)
	}
}

// TestKubeLoopbackPodIPIsRefusedByTheProxy documents why the harness uses
// network namespaces: the API server will not proxy to a loopback pod IP.
func TestKubeLoopbackPodIPIsRefusedByTheProxy(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	c.RunPod(t, pod("loop", map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0"), kubetest.Status{IP: "127.0.0.1"})
	cl := connect(t, c, kubetest.Admin)
	hc, err := httpclient.New(httpclient.Config{Transport: cl.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hc.Get(context.Background(), cl.URL(ns, "loop", "127.0.0.1", 8000)+"/metrics", "text/plain")
	if err == nil || !strings.Contains(err.Error(), "address not allowed") {
		t.Errorf("GET through the proxy to a loopback pod IP: %v; want the API server's 'address not allowed'", err)
	}
}

// TestKubeGroupsByOwner: a Deployment's pods (through their ReplicaSets, two
// revisions mid-rollout) group under the Deployment, a StatefulSet's
// under it.
func TestKubeGroupsByOwner(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	oldRS, newRS := c.Deployment(t, ns, "qwen", "5d4f8"), c.Deployment(t, ns, "qwen", "7c9b2")
	sts := c.StatefulSet(t, ns, "llama")
	for name, owner := range map[string]metav1.OwnerReference{"qwen-5d4f8-a": oldRS, "qwen-7c9b2-b": newRS, "llama-0": sts, "llama-1": sts} {
		p := pod(name, map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0")
		p.OwnerReferences = []metav1.OwnerReference{owner}
		c.RunPod(t, p, kubetest.Status{IP: "10.1.0.5"})
	}
	r := discover(t, connect(t, c, kubetest.Admin))
	found := byName(r)
	for name, owner := range map[string]string{"qwen-5d4f8-a": "Deployment qwen", "qwen-7c9b2-b": "Deployment qwen", "llama-0": "StatefulSet llama", "llama-1": "StatefulSet llama"} {
		if got := found[name].Owner; got != owner {
			t.Errorf("%s owner %q, want %q", name, got, owner)
		}
	}
}

// TestKubeCrashLoopBackOffSaysWhy: a pod in CrashLoopBackOff is found, not
// ready, with its container's reason, message and restarts.
func TestKubeCrashLoopBackOffSaysWhy(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	c.RunPod(t, pod("crashy", map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0"),
		kubetest.Status{IP: "10.1.0.6", Waiting: "CrashLoopBackOff", Message: "back-off 2m40s restarting failed container=server", Restarts: 5})
	r := discover(t, connect(t, c, kubetest.Admin))
	p := byName(r)["crashy"]
	want := "CrashLoopBackOff: back-off 2m40s restarting failed container=server (5 restarts)"
	if p.Ready || p.Reason != want {
		t.Errorf("crashy: ready %v, reason %q; want not ready, %q", p.Ready, p.Reason, want)
	}
	if !strings.Contains(strings.Join(r.Describe(), "\n"), "not ready: "+want) {
		t.Errorf("not said:\n%s", strings.Join(r.Describe(), "\n"))
	}
}

// TestKubePendingPodSaysItsLastWarning: a pod Pending with no condition
// reason yet is explained by its latest Warning event.
func TestKubePendingPodSaysItsLastWarning(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	p := c.RunPod(t, pod("waiting", map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0"),
		kubetest.Status{Phase: corev1.PodPending})
	c.Event(t, p, "FailedMount", "MountVolume.SetUp failed for volume \"model-cache\": not found", time.Now().Add(-time.Minute))
	c.Event(t, p, "FailedScheduling", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", time.Now())
	r := discover(t, connect(t, c, kubetest.Admin))
	want := "Pending: not ready; last warning: FailedScheduling: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
	if got := byName(r)["waiting"]; got.Ready || got.Reason != want {
		t.Errorf("waiting: ready %v, reason %q; want %q", got.Ready, got.Reason, want)
	}
}

// TestKubeMissingRBACSaysWhat: a user who may not list pods is told which
// verb on which resource in which namespace; one who may list pods but
// not read ReplicaSets has its pods grouped under them with a warning
// saying so; one without pods/proxy is refused the scrape by name.
func TestKubeMissingRBACSaysWhat(t *testing.T) {
	c := kubetest.Start(t, "nobody", "lister")
	c.Namespace(t, ns)
	rs := c.Deployment(t, ns, "qwen", "5d4f8")
	p := pod("qwen-5d4f8-a", map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0")
	p.OwnerReferences = []metav1.OwnerReference{rs}
	n := simulator(t)
	c.RunPod(t, p, kubetest.Status{IP: n.IP})

	_, err := connect(t, c, "nobody").Discover(context.Background(), "")
	want := `kube: RBAC: missing permission to list pods in namespace llm (grant verb "list" on resource "pods")`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `User "nobody" cannot list resource "pods"`) {
		t.Errorf("nobody: %v; want %q and who was refused", err, want)
	}

	c.Grant(t, "lister", ns, rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}})
	cl := connect(t, c, "lister")
	r := discover(t, cl)
	if got := byName(r)["qwen-5d4f8-a"].Owner; got != "ReplicaSet qwen-5d4f8" {
		t.Errorf("owner %q; want the ReplicaSet when it cannot be read", got)
	}
	warn := `missing permission to get replicasets.apps in namespace llm (grant verb "get" on resource "replicasets.apps")`
	if !strings.Contains(strings.Join(r.Warnings, "\n"), warn) {
		t.Errorf("warnings %q; want %q", r.Warnings, warn)
	}
	hc, err := httpclient.New(httpclient.Config{Transport: cl.Transport()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = hc.Get(context.Background(), cl.URL(ns, p.Name, n.IP, 8000)+"/metrics", "text/plain")
	if err == nil || !strings.Contains(err.Error(), `cannot get resource \"pods/proxy\"`) {
		t.Errorf("scrape without pods/proxy: %v; want the API server's refusal naming pods/proxy", err)
	}
}
