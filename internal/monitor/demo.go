package monitor

import (
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// DemoWindow is the demo's quantile window: short, so its breaches show
// within the first minute.
const DemoWindow = time.Minute

// DemoConfig monitors a running demo simulator: each model probed every
// 3 s and scraped, its GPU read from the simulator's dcgm-exporter, and
// MBU estimated from the model's size.
func DemoConfig(s *sim.Server) *config.Config {
	c := &config.Config{Window: slo.Duration(DemoWindow)}
	for _, md := range s.Models() {
		w := &bandwidth.Weights{Parameters: md.Params, DType: dtypeName(md.DtypeBytes), TensorParallel: md.NumGPUs,
			KVBytesPerToken: md.KVBytesPerToken}
		if g, err := sim.LookupGPU(md.GPU); err == nil {
			w.GPU = g.DCGMName
		}
		c.Endpoints = append(c.Endpoints, config.Endpoint{URL: s.URL(), Model: md.Name,
			// The simulator speaks vLLM: usage on every chunk gives the
			// exact tokens of each event (several under speculative decoding).
			Probe:   &probe.Settings{Interval: slo.Duration(3 * time.Second), MaxTokens: 96, Prompt: "medium", ContinuousUsage: true},
			GPU:     &config.GPUMap{Pod: sim.PodName(md.Name), Namespace: sim.PodNamespace},
			Weights: w})
	}
	if u := s.DCGMURL(); u != "" {
		c.DCGM = []gpu.Settings{{URL: u}}
	}
	return c
}

// DemoObjectives are the default objectives on short windows, so the
// degrading model's breach shows within a minute and its recovery too; a
// 99 %/28 d TTFT ratio objective runs scaled (see DemoSLOOptions).
func DemoObjectives() []slo.Objective {
	return []slo.Objective{
		{Name: "ttft-p95", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5, Window: 30 * time.Second, For: 10 * time.Second, KeepFiringFor: 10 * time.Second},
		{Name: "tpot-p95", Kind: slo.Percentile, Signal: telemetry.TPOT, Percentile: 0.95, Threshold: 0.050, Window: 30 * time.Second, For: 10 * time.Second, KeepFiringFor: 10 * time.Second},
		{Name: "tpot-99pct", Kind: slo.Ratio, Signal: telemetry.TPOT, Threshold: 0.050, Target: 0.99, Period: 28 * 24 * time.Hour},
		slo.AvailabilityObjective(),
	}
}

// DemoSLOOptions scale 28 days to 10 minutes.
func DemoSLOOptions() slo.Options { return slo.Options{Scale: 4032, MinWindow: 10 * time.Second} }

func dtypeName(bytes float64) string {
	switch {
	case bytes >= 4:
		return "fp32"
	case bytes >= 2 || bytes == 0:
		return "bf16"
	case bytes >= 1:
		return "fp8"
	default:
		return "int4"
	}
}
