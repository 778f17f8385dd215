package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// TestSnapshotWithoutTargetDiscovers: `ttftop snapshot` with no target
// finds the simulator on a scanned port, measures it, and says in the
// JSON how it was found; a non-LLM server on another scanned port is
// left alone (GETs only, never a generation request).
func TestSnapshotWithoutTargetDiscovers(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	simURL := startSim(t, model(sim.DemoHealthy))
	var mu sync.Mutex
	var got []string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		_, _ = w.Write([]byte("<html>not an LLM server</html>"))
	}))
	t.Cleanup(admin.Close)
	simPort, adminPort := lastPort(t, simURL), lastPort(t, admin.URL)

	code, out, errs := runCmd(t, "snapshot", "--json", "--duration", "4s", "--interval", "500ms", "--max-tokens", "8",
		"--discover-ports", fmt.Sprintf("%d,%d", simPort, adminPort))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "found http://127.0.0.1:"+strconv.Itoa(simPort)) || !strings.Contains(errs, "left alone 127.0.0.1:"+strconv.Itoa(adminPort)) {
		t.Errorf("stderr does not say what was found and left alone:\n%s", errs)
	}
	var doc struct {
		Endpoints []telemetry.EndpointSnapshot `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantHow := fmt.Sprintf(":%d, a well-known port", simPort)
	measured := false
	for _, ep := range doc.Endpoints {
		if ep.Model != sim.DemoHealthy || !strings.Contains(ep.Name, fmt.Sprintf(":%d/", simPort)) {
			continue // another test's simulator, found on this shared machine
		}
		if _, tunnelled := ep.Labels["via"]; ep.Labels["found"] != wantHow || tunnelled {
			t.Errorf("endpoint %s: labels %v, want found=%q and no via", ep.Name, ep.Labels, wantHow)
		}
		if s, ok := ep.Signals[telemetry.TTFT]; ok && strings.HasPrefix(s.Source, "probe:") && s.Count > 0 {
			measured = true
		}
	}
	if !measured {
		t.Errorf("the discovered simulator has no probed TTFT:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		if !strings.HasPrefix(r, "GET ") {
			t.Errorf("the non-LLM server got %s; want GETs only", r)
		}
	}
}

func lastPort(t *testing.T, url string) int {
	t.Helper()
	n, err := strconv.Atoi(url[strings.LastIndex(url, ":")+1:])
	if err != nil {
		t.Fatalf("no port in %s", url)
	}
	return n
}
