package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
)

// TestSnapshotAgainstSimulator runs `ttftop snapshot` against the
// simulator: every model is discovered, probed and scraped, and the JSON
// read-out has the documented shape with live figures.
func TestSnapshotAgainstSimulator(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	code, out, errOut := runCmd(t, "snapshot", url, "--duration", "4s", "--interval", "500ms", "--max-tokens", "16", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Endpoints []struct {
			Name, Model, Engine string
			Signals             map[string]struct {
				P50        *float64 `json:"p50_ms"`
				P99        *float64 `json:"p99_ms"`
				Requests   *float64 `json:"value_requests"`
				Ratio      *float64 `json:"value_ratio"`
				TokensPerS *float64 `json:"value_tokens_per_s"`
				Source     string
				State      string
				ObservedAt string `json:"observed_at"`
			}
			Diagnosis *struct {
				Causes []struct {
					Cause string
				}
				Decomposition map[string]any
			}
		}
		Sources []struct{ Kind, URL, State, Error string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Endpoints) != 1 {
		t.Fatalf("endpoints: %+v", doc.Endpoints)
	}
	ep := doc.Endpoints[0]
	if ep.Model != sim.DemoHealthy || ep.Engine != "vllm" || !strings.HasSuffix(ep.Name, "/"+sim.DemoHealthy) {
		t.Errorf("endpoint: %+v", ep)
	}
	for _, sig := range []string{"ttft", "tpot", "itl", "e2e"} {
		s := ep.Signals[sig]
		if s.P50 == nil || s.P99 == nil || *s.P50 <= 0 || s.State != "live" || s.ObservedAt == "" {
			t.Errorf("%s: %+v", sig, s)
		}
	}
	// Each figure in the unit its key names: requests, a fraction, tok/s.
	for sig, value := range map[string]func(req, ratio, tps *float64) *float64{
		"running":    func(req, _, _ *float64) *float64 { return req },
		"waiting":    func(req, _, _ *float64) *float64 { return req },
		"kv_cache":   func(_, ratio, _ *float64) *float64 { return ratio },
		"output_tps": func(_, _, tps *float64) *float64 { return tps },
	} {
		if s := ep.Signals[sig]; value(s.Requests, s.Ratio, s.TokensPerS) == nil || s.State != "live" || !strings.HasPrefix(s.Source, "scrape:") && !strings.HasPrefix(s.Source, "probe:") {
			t.Errorf("%s: %+v", sig, s)
		}
	}
	// The 8B model's TPOT on an idle H100 is about 7 ms (sim engine model).
	if p50 := *ep.Signals["tpot"].P50; p50 < 3 || p50 > 30 {
		t.Errorf("tpot p50 %.2f ms, want about 7", p50)
	}
	// The diagnosis: healthy (no objective breached, baselines still
	// warming), with the latency's terms from probe and scrape.
	if d := ep.Diagnosis; d == nil || len(d.Causes) != 1 || d.Causes[0].Cause != "none" {
		t.Errorf("diagnosis: %+v", d)
	} else {
		for _, term := range []string{"client_ttft_ms", "server_ttft_ms", "network_ms", "queue_ms", "prefill_ms", "tpot_ms"} { // no floor: quick mode knows no model size for MBU
			if v, ok := d.Decomposition[term].(float64); !ok || (term != "network_ms" && v <= 0) {
				t.Errorf("decomposition %s = %v: %+v", term, d.Decomposition[term], d.Decomposition)
			}
		}
	}
	kinds := map[string]string{}
	for _, s := range doc.Sources {
		kinds[s.Kind] = s.State
	}
	if kinds["probe"] != "live" || kinds["scrape"] != "live" {
		t.Errorf("sources: %+v", doc.Sources)
	}
}

// TestDashboardHeadlessPrintsText: with stdout not a terminal the
// dashboard prints plain summaries instead of drawing a TUI.
func TestDashboardHeadlessPrintsText(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	ctx, cancel := contextWithTimeout(t, 5)
	defer cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{url, "--refresh", "1s", "--interval", "500ms", "--max-tokens", "16"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "ENDPOINT") || !strings.Contains(out.String(), sim.DemoHealthy) || strings.Contains(out.String(), "\x1b[") {
		t.Errorf("headless output:\n%s", out.String())
	}
}

func TestDashboardNeedsSomethingToWatch(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	code, _, errOut := runCmd(t, "dashboard", "--no-discover")
	if code == 0 || !strings.Contains(errOut, "nothing to monitor") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func contextWithTimeout(t *testing.T, seconds int) (context.Context, context.CancelFunc) {
	t.Helper()
	return context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
}

// TestQuickModeURLWithoutScheme: "ttftop host:port" means http.
func TestQuickModeURLWithoutScheme(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	code, out, errOut := runCmd(t, "snapshot", strings.TrimPrefix(url, "http://"), "--duration", "2s", "--interval", "500ms", "--max-tokens", "8", "--text")
	if code != 0 || !strings.Contains(out, sim.DemoHealthy) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// A snapshot whose every source failed exits 1 and says so on stderr,
// with the read-out still printed: a dead Prometheus must not read as a
// quiet fleet to a script.
func TestSnapshotNothingMeasuredExits1(t *testing.T) {
	dead := closedPortURL(t)
	code, out, errOut := runCmd(t, "snapshot", "--prometheus", dead, "--duration", "2s", "--json")
	if code != 1 || !strings.Contains(errOut, "every source failed") || !strings.Contains(errOut, "nothing was measured") {
		t.Fatalf("exit %d, stderr %q: want 1 and every source failed", code, errOut)
	}
	var doc struct {
		Sources []struct{ Kind, State string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Sources) != 1 || doc.Sources[0].State != "error" {
		t.Fatalf("read-out %v %q: want the failed source listed", err, out)
	}
}
