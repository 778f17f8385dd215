//go:build integration

package kube_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ttftop/ttftop/internal/kubetest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/probe"
)

// TestKubeProxyAbortsCounted measures how often the test API server's
// pod proxy aborts a probe's answer on its own, and checks that each
// such failure names the proxy and that the pod had answered. It runs
// TTFTOP_KUBE_PROXY_PROBES probes, one every 300 ms as the dashboard's
// tests do (about a minute for 200), so it is skipped without it.
func TestKubeProxyAbortsCounted(t *testing.T) {
	total, err := strconv.Atoi(os.Getenv("TTFTOP_KUBE_PROXY_PROBES"))
	if err != nil || total <= 0 {
		t.Skip("set TTFTOP_KUBE_PROXY_PROBES=N to measure the pod proxy over N probes")
	}
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	n := kubetest.NewNetNS(t)
	h := kubetest.Simulator(t, sim.Config{Load: 1, CoarseTiming: true}).Handler()
	var mu sync.Mutex
	var written []int64 // body bytes the pod wrote, per chat request
	n.Serve(t, 8000, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		if r.Method == http.MethodPost {
			mu.Lock()
			written = append(written, cw.n)
			mu.Unlock()
		}
	}))
	c.RunPod(t, pod("p", map[string]string{"app.kubernetes.io/name": "vllm"}, "vllm/vllm-openai:v0.11.0",
		corev1.ContainerPort{Name: "http", ContainerPort: 8000}), kubetest.Status{IP: n.IP})
	cl := connect(t, c, kubetest.Admin)
	p, err := probe.New(probe.Options{URL: cl.URL(ns, "p", n.IP, 8000), Model: sim.DefaultModels()[0].Name, Transport: cl.Transport(), MaxTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	failed := 0
	for i := range total {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r := p.Do(ctx, nil)
		cancel()
		if !r.OK {
			failed++
			mu.Lock()
			wrote := int64(-1) // its handler may not have returned yet
			if len(written) > i {
				wrote = written[i]
			}
			mu.Unlock()
			t.Logf("probe %d: status %d %s: %s (connection reused %v; the pod wrote %d bytes)", i, r.Status, r.ErrorKind, r.Err, r.Reused, wrote)
			if r.ErrorKind != probe.ErrTruncated || !strings.Contains(r.Err, "the Kubernetes API server's pod proxy aborted the response") {
				t.Errorf("probe %d failed without naming the pod proxy: %s: %s", i, r.ErrorKind, r.Err)
			}
		}
		<-tick.C
	}
	aborts := strings.Count(c.APIServerLog(), "ReverseProxy read error during body copy")
	t.Logf("%d of %d probes through the pod proxy failed; the API server logged %d aborted body copies", failed, total, aborts)
	if failed > aborts {
		t.Errorf("%d probes failed but the API server logged %d aborts: some failures are not the proxy's", failed, aborts)
	}
}

// countingWriter counts the body bytes a handler writes.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the flusher beneath.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
