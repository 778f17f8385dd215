package discover

import (
	"context"
	"errors"
	"fmt"
	"github.com/ttftop/ttftop/internal/discover/enginetest"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// recorder is a non-LLM HTTP server that remembers the methods it got.
type recorder struct {
	mu      sync.Mutex
	methods []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.methods = append(r.methods, req.Method+" "+req.URL.Path)
	r.mu.Unlock()
	_, _ = w.Write([]byte("<html>an admin page</html>"))
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.methods...)
}

func noNvidiaSMI(string) (string, error) { return "", errors.New("not installed") }

func findByPort(r Result, port int) (Found, bool) {
	for _, f := range r.Endpoints {
		if f.URL == "http://127.0.0.1:"+strconv.Itoa(port) {
			return f, true
		}
	}
	return Found{}, false
}

func skippedPort(r Result, port int) (Skipped, bool) {
	for _, s := range r.Skipped {
		if s.Port == port {
			return s, true
		}
	}
	return Skipped{}, false
}

// TestLocalFindsEnginesAndLeavesOthersAlone runs discovery on this
// machine against real processes: a simulator named vllm started with
// --port, one named llama-server that says no port (found through the
// socket it owns), a non-LLM server named text-generation-launcher with
// --port, and in this process a second simulator and a non-LLM server on
// the scanned "well-known" ports.
func TestLocalFindsEnginesAndLeavesOthersAlone(t *testing.T) {
	ctx := context.Background()
	vllmPort, llamaPort, tgiPort := enginetest.FreePort(t), enginetest.FreePort(t), enginetest.FreePort(t)
	vllm := enginetest.Start(t, "vllm", enginetest.Sim, vllmPort, "serve", "some/model", "--port", strconv.Itoa(vllmPort))
	llama := enginetest.Start(t, "llama-server", enginetest.Sim, llamaPort, "-m", "model.gguf")
	fake := enginetest.Start(t, "text-generation-launcher", enginetest.Plain, tgiPort, "--port", strconv.Itoa(tgiPort))

	second, err := sim.New(sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	secondPort := portOf(t, second.URL())
	rec := &recorder{}
	admin := httptest.NewServer(rec)
	t.Cleanup(admin.Close)
	adminPort := portOf(t, admin.URL)

	r, err := Local(ctx, Options{Ports: []int{secondPort, adminPort}, DCGMPort: -1, LookPath: noNvidiaSMI})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range r.Describe() {
		t.Log(line)
	}
	want := map[int]string{
		vllmPort:   fmt.Sprintf("vllm, pid %d, :%d from its --port", vllm.PID, vllmPort),
		llamaPort:  fmt.Sprintf("llamacpp, pid %d, :%d a socket it listens on", llama.PID, llamaPort),
		secondPort: fmt.Sprintf(":%d, a well-known port", secondPort),
	}
	for port, how := range want {
		f, ok := findByPort(r, port)
		if !ok {
			t.Errorf(":%d not found (%s); skipped: %+v", port, how, r.Skipped)
			continue
		}
		if f.How != how {
			t.Errorf(":%d found as %q, want %q", port, f.How, how)
		}
		// The simulator serves vLLM's /metrics: the page names the engine.
		if f.Engine != telemetry.EngineVLLM || !f.Metrics || len(f.Models) == 0 {
			t.Errorf(":%d: engine %s, metrics %v, models %v; want vllm, /metrics, the simulator's models", port, f.Engine, f.Metrics, f.Models)
		}
	}
	for _, port := range []int{tgiPort, adminPort} {
		if f, ok := findByPort(r, port); ok {
			t.Errorf("non-LLM server :%d taken for one: %+v", port, f)
		}
		if _, ok := skippedPort(r, port); !ok {
			t.Errorf("non-LLM server :%d not listed as left alone", port)
		}
	}
	if log := fake.Requests(t); strings.Contains(log, "POST ") || log == "" {
		t.Errorf("the non-LLM text-generation-launcher got %q; want GETs only, and at least its model list asked", log)
	}
	for _, m := range rec.got() {
		if !strings.HasPrefix(m, "GET ") {
			t.Errorf("the non-LLM server on a scanned port got %s; want GETs only", m)
		}
	}
}

func portOf(t *testing.T, url string) int {
	t.Helper()
	i := strings.LastIndex(url, ":")
	n, err := strconv.Atoi(url[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
