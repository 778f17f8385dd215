//go:build integration

package monitor

import (
	"os"
	"testing"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/internal/sim"
)

// The demo simulator without its scenario, watched with the demo's
// objectives and the default diagnosis, names no cause on any endpoint
// after the warm-up. TTFTOP_HEALTHY_RUN sets how long (e.g. 10m);
// unset, the test is skipped (it is a soak, not a unit test).
func TestHealthySimulatorNamesNone(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("TTFTOP_HEALTHY_RUN"))
	if err != nil || d <= 0 {
		t.Skip("set TTFTOP_HEALTHY_RUN=10m to run the healthy soak")
	}
	cfg := sim.DemoConfig()
	cfg.Scenario = sim.Scenario{}
	cfg.CoarseTiming = true
	m := runOnSimulator(t, cfg, Options{Objectives: DemoObjectives(), SLO: DemoSLOOptions()}, nil)
	warm := time.Now().Add(45 * time.Second) // the 30 s recent window and 30 s of baseline
	end := warm.Add(d)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	checks, named := 0, 0
	for now := range tick.C {
		if now.After(end) {
			break
		}
		if now.Before(warm) {
			continue
		}
		checks++
		for ep, dg := range m.Diagnosis.Latest() {
			if dg.Leading() != diagnosis.None {
				named++
				f := dg.Causes[0]
				t.Errorf("%s at %s: %s (%s) %s %v", ep, now.Sub(warm).Round(time.Second), f.Cause, f.Summary, f.EvidenceWords(), f.Missing)
			}
		}
	}
	t.Logf("%d checks of %d endpoints over %s after warm-up: %d named a cause", checks, len(cfg.Models), d, named)
}
