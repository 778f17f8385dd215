//go:build integration

package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/internal/kubetest"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/telemetry"
)

// openKube opens the monitor `ttftop --kube --namespace llm FLAGS…`
// would on c's cluster; stderr is what it says.
func openKube(t *testing.T, c *kubetest.Cluster, flags ...string) (*monitor.Monitor, *syncbuf.Buffer) {
	t.Helper()
	return openKubeAs(t, c, kubetest.Admin, flags...)
}

// openKubeAs is openKube as user.
func openKubeAs(t *testing.T, c *kubetest.Cluster, user string, flags ...string) (*monitor.Monitor, *syncbuf.Buffer) {
	t.Helper()
	var f sourceFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.bind(fs)
	args := append([]string{"--kube", "--kubeconfig", c.Kubeconfig(t, user, "kubetest", "default"), "--namespace", "llm"}, flags...)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	stderr := &syncbuf.Buffer{}
	m, _, err := f.open(nil, stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	return m, stderr
}

// TestKubeProbesScrapesAndJoinsGPUsThroughProxy: `--kube -n llm` finds a
// vLLM pod, probes it and scrapes its /metrics through the API server's
// pods/proxy, and joins it to the GPUs of the dcgm-exporter pod on its
// node (in another namespace), also scraped through the proxy; a second
// GPU node's exporter is not joined to it.
func TestKubeProbesScrapesAndJoinsGPUsThroughProxy(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, "llm")
	c.Namespace(t, "gpu-operator")
	s := simtest.New(t, sim.Config{Load: 1, CoarseTiming: true, Hostname: "gpu-node-1"})
	n := kubetest.NewNetNS(t)
	n.Serve(t, 8000, s.Handler())
	n.Serve(t, 9400, s.DCGMHandler())
	// The other node's GPUs, named by their own host.
	other := simtest.New(t, sim.Config{Hostname: "gpu-node-2", CoarseTiming: true})
	n.Serve(t, 9401, other.DCGMHandler())
	c.RunPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vllm-0", Namespace: "llm", Labels: map[string]string{"app.kubernetes.io/name": "vllm"}},
		Spec: corev1.PodSpec{NodeName: "gpu-node-1", Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}}}}, kubetest.Status{IP: n.IP})
	for node, port := range map[string]int32{"gpu-node-1": 9400, "gpu-node-2": 9401} {
		c.RunPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "dcgm-" + node, Namespace: "gpu-operator", Labels: map[string]string{"app": "nvidia-dcgm-exporter"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "exporter", Image: "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3",
				Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: port}}}}}}, kubetest.Status{IP: n.IP})
	}

	m, stderr := openKube(t, c, "--interval", "500ms", "--max-tokens", "8")
	if !strings.Contains(stderr.String(), "ttftop: kube: found llm/vllm-0: vllm under Pod vllm-0 (app.kubernetes.io/name=vllm; metrics :8000/metrics from port named http)") {
		t.Errorf("stderr does not say what was found:\n%s", stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	// The probe's TTFT, the scrape's server-side figures and the node's
	// GPUs, all through the pod proxy.
	var snap telemetry.Snapshot
	var name string
	ready := func() bool {
		for _, ep := range snap.Endpoints {
			if !strings.HasPrefix(ep.Name, "llm/vllm-0/") {
				continue
			}
			name = ep.Name
			if ep.Signals[telemetry.TTFT].Count == 0 || ep.Server[telemetry.TTFT].Source == "" || ep.Labels["node"] != "gpu-node-1" {
				return false
			}
			joined := 0
			for _, g := range snap.GPUs {
				if slices.Contains(g.Endpoints, name) {
					joined++
					if !strings.Contains(g.Source, "gpu-operator/dcgm-gpu-node-1 (node gpu-node-1)") {
						t.Fatalf("GPU %+v from another node's exporter joined to %s", g, name)
					}
				}
			}
			return joined > 0
		}
		return false
	}
	for ctx.Err() == nil {
		if snap = m.Store.Snapshot(time.Now(), time.Minute); ready() {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling the store, bounded by ctx
	}
	cancel()
	<-done
	if !ready() {
		t.Fatalf("no probed TTFT, server TTFT and joined GPUs for %q through the pod proxy:\nendpoints %+v\ngpus %+v\nsources %+v\n%s",
			name, snap.Endpoints, snap.GPUs, snap.Sources, stderr.String())
	}
}
