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
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/sources/probe"
)

// TestKubeProxyAbortsCounted: probes back to back through the API
// server's pod proxy are never aborted by it (before request bodies went
// chunked, one in 20 to 50 was: 200, then the body cut before any event,
// the API server logging "ReverseProxy read error during body copy"),
// and any failure names the proxy. TTFTOP_KUBE_PROXY_PROBES sets how
// many (400 by default, about 15 s).
func TestKubeProxyAbortsCounted(t *testing.T) {
	total := 400
	if v := os.Getenv("TTFTOP_KUBE_PROXY_PROBES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("TTFTOP_KUBE_PROXY_PROBES=%q: want a count", v)
		}
		total = n
	}
	c := kubetest.Start(t)
	c.Namespace(t, ns)
	n := kubetest.NewNetNS(t)
	h := simtest.New(t, sim.Config{Load: 1, CoarseTiming: true}).Handler()
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
	}
	aborts := strings.Count(c.APIServerLog(), "ReverseProxy read error during body copy")
	t.Logf("%d of %d probes through the pod proxy failed; the API server logged %d aborted body copies", failed, total, aborts)
	if failed > 0 || aborts > 0 {
		t.Errorf("%d of %d probes failed, %d answers aborted by the API server; want none", failed, total, aborts)
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
