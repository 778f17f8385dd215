//go:build integration

package kube_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ttftop/ttftop/internal/kubetest"
	"github.com/ttftop/ttftop/sources/probe"
)

// TestKubeProxyAbortIsNamedTheProxys: when the API server aborts a
// proxied answer after its 200 (here because the pod's server aborts
// behind it, as the test API server's proxy does on its own about once
// in 30 probes, see docs/kubernetes.md), the probe fails as a broken
// stream naming the API server's pod proxy, not as an answer that holds
// no events.
func TestKubeProxyAbortIsNamedTheProxys(t *testing.T) {
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	n := kubetest.NewNetNS(t)
	n.Serve(t, 8000, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		// The start of an event, so the API server sends its 200 on; then
		// the connection closes before the event is complete.
		if _, err := w.Write([]byte(`data: {"choices":[`)); err != nil {
			t.Error(err)
		}
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Error(err)
		}
		panic(http.ErrAbortHandler)
	}))
	c.RunPod(t, pod("cut", map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0",
		corev1.ContainerPort{Name: "http", ContainerPort: 8000}), kubetest.Status{IP: n.IP})
	cl := connect(t, c, kubetest.Admin)
	p, err := probe.New(probe.Options{URL: cl.URL(ns, "cut", n.IP, 8000), Model: "m", Transport: cl.Transport(), MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := p.Do(ctx, nil)
	if r.Status != http.StatusOK || r.ErrorKind != probe.ErrTruncated ||
		!strings.Contains(r.Err, "the Kubernetes API server's pod proxy aborted the response") || !strings.Contains(r.Err, "unexpected EOF") {
		t.Errorf("status %d, %s: %q; want 200, truncated naming the API server's pod proxy (unexpected EOF)", r.Status, r.ErrorKind, r.Err)
	}
}
