package monitor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// An availability objective in the config takes a target and a window;
// a threshold there is an error, not silently ignored.
func TestConfigAvailabilityObjective(t *testing.T) {
	objs, err := config.Objectives([]config.SLO{{Name: "up", Kind: "availability", Target: 0.9, Window: slo.Duration(2 * time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	o := objs[0].WithDefaults()
	if o.Kind != slo.Availability || o.Target != 0.9 || o.Window != 2*time.Minute || o.Threshold != 0.1 || o.Validate() != nil {
		t.Errorf("availability objective %+v", o)
	}
	if _, err := config.Objectives([]config.SLO{{Name: "up", Kind: "availability", Threshold: "5s"}}); err == nil {
		t.Error("availability with a threshold accepted")
	}
}

// Quick mode (a URL and --dcgm, no GPU map): the models the server lists
// get the GPUs of the dcgm-exporter on their host; no phantom "gpu:"
// row appears.
func TestQuickModeJoinsHostGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator for several seconds")
	}
	cfg := sim.DemoConfig()
	cfg.Scenario = sim.Scenario{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := startSim(t, ctx, cfg)
	c := &config.Config{Endpoints: []config.Endpoint{{URL: s.URL(), Probe: &probe.Settings{Interval: slo.Duration(time.Second)}}},
		DCGM: []gpu.Settings{{URL: s.DCGMURL()}}}
	m := runConfig(t, ctx, c)
	joined := func() bool {
		snap := m.Store.Snapshot(time.Now(), time.Minute)
		n := 0
		for _, ep := range snap.Endpoints {
			if strings.HasPrefix(ep.Name, "gpu:") {
				t.Fatalf("phantom GPU row %s", ep.Name)
			}
			if v, ok := ep.Signals[telemetry.GPUMemBW]; ok && v.State == telemetry.Live {
				n++
			}
		}
		return n == len(s.Models())
	}
	waitFor(t, "every model with its host's DRAM activity", joined)
}
