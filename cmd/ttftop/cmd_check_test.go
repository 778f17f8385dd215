package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// hasRow reports whether a line of out starts with these fields.
func hasRow(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && slices.Equal(f[:len(fields)], fields) {
			return true
		}
	}
	return false
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// startSim serves one simulated model, optionally degraded from the start.
func startSim(t *testing.T, model sim.ModelSpec, events ...sim.Event) string {
	t.Helper()
	return simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{model},
		Scenario: sim.Scenario{Events: events}}).URL()
}

func model(name string) sim.ModelSpec {
	for _, m := range sim.DefaultModels() {
		if m.Name == name {
			return m
		}
	}
	panic("no sim model " + name)
}

func TestCheckHealthyPasses(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	code, out, errs := runCmd(t, "check", url, "--slo-ttft", "5s", "--slo-tpot", "50ms", "-n", "3", "--max-tokens", "16")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !hasRow(out, "PASS", "ttft-p95") || !hasRow(out, "PASS", "tpot-p95") || !hasRow(out, "PASS", "availability") ||
		!hasRow(out, "3", "passed,", "0", "failed,", "0", "not", "measured") ||
		!strings.Contains(out, "(3 samples)") {
		t.Errorf("output:\n%s", out)
	}
}

func TestCheckDegradedFails(t *testing.T) {
	// A 14B model on an A100 decodes at ≈21 ms/token; a quarter of its
	// bandwidth makes that ≈85 ms, over the 50 ms TPOT objective.
	url := startSim(t, model(sim.DemoDegrading), sim.Event{Kind: sim.EventBandwidth, Factor: 0.25})
	code, out, errs := runCmd(t, "check", url, "-n", "3", "--max-tokens", "12", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	type result struct {
		Objective        string
		Measured, Pass   bool
		ValueMS          *float64 `json:"value_ms"`
		ThresholdMS      *float64 `json:"threshold_ms"`
		Value, Threshold *float64
		ValueRatio       *float64 `json:"value_ratio"`
		ThresholdRatio   *float64 `json:"threshold_ratio"`
		Observations     float64
	}
	var rep struct {
		Schema   string
		Pass     bool
		ExitCode int `json:"exit_code"`
		Results  []result
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	byName := map[string]result{}
	for _, r := range rep.Results {
		byName[r.Objective] = r
	}
	// Durations in ms, named so; no unitless seconds beside them.
	tpot := byName["tpot-p95"]
	if rep.Schema != "ttftop/v1" || rep.Pass || rep.ExitCode != 1 || !tpot.Measured || tpot.Pass || tpot.ValueMS == nil || *tpot.ValueMS < 50 ||
		tpot.ThresholdMS == nil || *tpot.ThresholdMS != 50 || tpot.Value != nil || tpot.Threshold != nil || tpot.Observations != 3 {
		t.Errorf("report %+v\ntpot %+v", rep, tpot)
	}
	// The availability objective's figure is a fraction, named so.
	if av := byName["availability"]; av.ValueRatio == nil || av.ThresholdRatio == nil || av.Value != nil {
		t.Errorf("availability %+v", av)
	}
	if ttft := byName["ttft-p95"]; !ttft.Pass {
		t.Errorf("ttft %+v: prefill is not degraded", ttft)
	}
}

func TestCheckUnreachableCannotMeasure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "check", "http://"+addr, "-n", "2", "--timeout", "5s")
	if code != 2 || !strings.Contains(errs, "could not measure http://"+addr) {
		t.Errorf("exit %d, want 2\n%s\n%s", code, out, errs)
	}
	// With the model named, requests are sent and fail: latency cannot be
	// measured, and the availability objective fails outright (1 beats 2).
	code, out, errs = runCmd(t, "check", "http://"+addr, "--model", "m", "-n", "2", "--timeout", "5s")
	if code != 1 || !hasRow(out, "N/A", "ttft-p95") || !hasRow(out, "FAIL", "availability") || !strings.Contains(out, "every request failed (connect") {
		t.Errorf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	// Without the availability objective nothing can be judged: 2.
	code, out, errs = runCmd(t, "check", "http://"+addr, "--model", "m", "-n", "2", "--timeout", "5s", "--slo-availability", "0")
	if code != 2 || !hasRow(out, "N/A", "ttft-p95") || hasRow(out, "FAIL", "availability") {
		t.Errorf("exit %d, want 2\n%s\n%s", code, out, errs)
	}
	code, out, errs = runCmd(t, "check", "http://"+addr, "--model", "m", "-n", "2", "--slo-error-rate", "1%")
	if code != 1 || !hasRow(out, "FAIL", "error-rate") || !strings.Contains(out, "100% (2 requests)") {
		t.Errorf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
}

func TestCheckConfigFile(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	cfg := filepath.Join(t.TempDir(), "ttftop.yaml")
	yaml := `endpoints:
  - name: local
    url: ` + url + `
    probe: {max_tokens: 8}
slos:
  - name: ttft-fast
    kind: percentile
    signal: ttft
    percentile: 99
    threshold: 2s
  - name: good-ttft
    kind: ratio
    signal: ttft
    threshold: 2s
    target: 0.9
    period: 28d
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "check", "--config", cfg, "-n", "2")
	if code != 0 || !hasRow(out, "PASS", "ttft-fast", "local/"+sim.DemoHealthy) || !hasRow(out, "PASS", "good-ttft", "local/"+sim.DemoHealthy) ||
		!strings.Contains(out, "100% good (2 requests)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// No URL on an empty machine is TestNothingFoundSaysWhatWasLooked's: on the
// shared test machine another test's simulator would be found.
func TestCheckUsage(t *testing.T) {
	if code, _, _ := runCmd(t, "check", "http://x", "--slo-error-rate", "1"); code != 2 {
		t.Errorf("bad flag value: exit %d, want 2", code)
	}
	if code, out, _ := runCmd(t, "check", "--help"); code != 0 || !strings.Contains(out, "--slo-ttft") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	if code, _, _ := runCmd(t, "check", "--config", "/nonexistent.yaml"); code != 2 {
		t.Errorf("missing config: exit %d, want 2", code)
	}
}

// TestCheckJudgesAllItMeasured: a run longer than the objective's window
// is judged on all of it.
func TestCheckJudgesAllItMeasured(t *testing.T) {
	slow := func(ctx context.Context, sink telemetry.Sink) error {
		for i := range 2 {
			if i > 0 {
				time.Sleep(1200 * time.Millisecond)
			}
			sink.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: time.Now(), Endpoint: "ep",
				Signal: telemetry.TTFT, Source: "probe:x", Value: 1})
		}
		return nil
	}
	objs := []slo.Objective{{Name: "ttft", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.5, Threshold: 5, Window: time.Second}}
	rep := check(context.Background(), []checkTarget{{label: "x", measure: slow}}, objs, slo.Options{})
	if len(rep.Results) != 1 || rep.Results[0].Count != 2 || rep.ExitCode != 0 {
		t.Errorf("report %+v: want both samples judged", rep)
	}
}

// check prints for people: measured latencies with three significant
// digits (248ms, 10.3ms, never 248.304ms), and each promise over the time
// the run really took (a few seconds: never "over 5m", the objective's
// own window, which the check did not wait out).
func TestCheckPrintsForPeople(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	start := time.Now()
	code, out, errs := runCmd(t, "check", url, "-n", "2", "--max-tokens", "8")
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	measured := regexp.MustCompile(`  ([0-9.]+)(ms|s) \(2 samples\)`).FindAllStringSubmatch(out, -1)
	if len(measured) != 2 {
		t.Fatalf("want 2 measured latencies:\n%s", out)
	}
	for _, m := range measured {
		if digits := strings.TrimLeft(strings.ReplaceAll(m[1], ".", ""), "0"); len(digits) > 3 {
			t.Errorf("measured %s%s: more than 3 significant digits", m[1], m[2])
		}
	}
	over := regexp.MustCompile(` over (\S+)\n`).FindAllStringSubmatch(out, -1)
	if len(over) != 3 {
		t.Fatalf("want 3 promises with a window:\n%s", out)
	}
	for _, m := range over {
		d, err := slo.ParseDuration(m[1])
		if err != nil || d <= 0 || d > elapsed.Truncate(time.Second)+time.Second {
			t.Errorf("promise over %s (%v): the run took %v\n%s", m[1], err, elapsed, out)
		}
	}
}
