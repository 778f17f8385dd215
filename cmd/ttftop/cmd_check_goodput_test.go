package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
)

// TestCheckGoodput: check reports, per endpoint, the share of requests
// meeting every latency objective and their tokens/s: all of a healthy
// model's, none of one whose TPOT is over its objective.
func TestCheckGoodput(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	code, out, errs := runCmd(t, "check", url, "--slo-ttft", "5s", "--slo-tpot", "50ms", "-n", "3", "--max-tokens", "16")
	if code != 0 || !strings.Contains(out, ": goodput 100.0% (3 of 3 requests meet TTFT ≤ 5s, TPOT ≤ 50ms)  good ") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}

	url = startSim(t, model(sim.DemoDegrading), sim.Event{Kind: sim.EventBandwidth, Factor: 0.25})
	code, out, errs = runCmd(t, "check", url, "-n", "3", "--max-tokens", "12", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	var rep checkReportJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Goodput) != 1 {
		t.Fatalf("goodput %+v", rep.Goodput)
	}
	g := rep.Goodput[0]
	if g.Requests != 3 || g.Good != 0 || g.Share != 0 || g.GoodOutputThroughput != 0 || g.BoundsMS["tpot"] != 50 || g.DurationMS <= 0 {
		t.Errorf("degraded goodput %+v", g)
	}
}
