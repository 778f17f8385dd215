package gpu

import (
	"context"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

func TestScrapeSimulatorDCGM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulator")
	}
	models := []sim.ModelSpec{
		{Name: "org/a", Params: 1.24e9, KVBytesPerToken: 32768, GPU: "L4", MaxBatch: 8, MeanOutputTokens: 16},
		{Name: "org/b", Params: 3.21e9, KVBytesPerToken: 114688, GPU: "H100 SXM", NumGPUs: 2, MaxBatch: 8, MeanOutputTokens: 16},
	}
	srv, err := sim.New(sim.Config{Listen: "127.0.0.1:0", DCGMListen: "127.0.0.1:0", Seed: 1, Load: 2, Models: models})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // let the 1 s activity window fill
	var targets []Target
	for _, m := range models {
		targets = append(targets, Target{Endpoint: m.Name, Pod: sim.PodName(m.Name), Namespace: "ttftop-sim"})
	}
	targets = append(targets, Target{Endpoint: "host", Host: "ttftop-sim"})
	c := &collector{}
	if err := New(Config{URL: srv.DCGMURL(), Targets: targets}, c).ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	for _, ep := range []string{"org/a", "org/b", "host"} {
		bw := get(t, obs, ep, telemetry.GPUMemBW)
		if bw.Kind != telemetry.KindSample || bw.Value <= 0 || bw.Value > 1 || bw.Approx {
			t.Errorf("%s DRAM active %+v", ep, bw)
		}
		t.Logf("%s DRAM_ACTIVE %.3f", ep, bw.Value)
	}
	fbA, fbB, fbHost := get(t, obs, "org/a", FBUsedMiB).Value, get(t, obs, "org/b", FBUsedMiB).Value, get(t, obs, "host", FBUsedMiB).Value
	if fbA <= 0 || fbB <= fbA || fbHost != fbA+fbB { // org/b: two H100s, summed
		t.Errorf("framebuffer a=%v b=%v host=%v", fbA, fbB, fbHost)
	}
	if st := statusOf(t, obs); st.State != telemetry.Live || len(st.Warnings) != 0 {
		t.Errorf("status %+v", st)
	}
}
