package sim

import "time"

// Demo model names (DemoConfig).
const (
	DemoHealthy   = "meta-llama/Llama-3.1-8B-Instruct"
	DemoDegrading = "Qwen/Qwen2.5-14B-Instruct"
	DemoBursty    = "meta-llama/Llama-3.2-3B-Instruct"
	DemoReasoning = "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"
)

// DemoConfig is the setup of tokentop's demo, on loopback ports chosen by
// the OS (read them from URL and DCGMURL after Start):
//   - DemoHealthy: 8B on an H100, TPOT ≈ 7 ms throughout;
//   - DemoDegrading: 14B on an A100, TPOT ≈ 21 ms until its bandwidth
//     efficiency drops ÷4 from 30 s to 75 s (TPOT ≈ 85 ms, p95 well over a
//     50 ms SLO, DRAM-active ÷4), then recovers;
//   - DemoBursty: 3B on an L4, TPOT ≈ 33 ms, with 24 extra streams for
//     12 s every 40 s (from 10 s): queueing, TTFT spikes and ITL stalls from
//     chunked prefills;
//   - DemoReasoning: an 8B reasoning model on an H100 that thinks for
//     about 40 tokens before it answers, so TTFT (first thinking token)
//     and the time to the first answer token differ by ≈ 0.3 s.
//
// Each model also has 4 background streams so metrics move without probes.
func DemoConfig() Config {
	return Config{
		Listen:     "127.0.0.1:0",
		DCGMListen: "127.0.0.1:0",
		Seed:       1,
		Load:       4,
		Models:     append(DefaultModels(), demoReasoningModel()),
		Scenario: Scenario{Events: []Event{
			{At: 30 * time.Second, Kind: EventBandwidth, Model: DemoDegrading, Factor: 0.25, For: 45 * time.Second},
			{At: 10 * time.Second, Kind: EventBurst, Model: DemoBursty, Streams: 24, For: 12 * time.Second, Every: 40 * time.Second},
		}},
	}
}

func demoReasoningModel() ModelSpec {
	return BatchingCurve(ModelSpec{Name: DemoReasoning, Params: 8.03e9, DtypeBytes: 2, KVBytesPerToken: 131072,
		GPU: "H100 SXM", NumGPUs: 1, MaxBatch: 256, MaxQueue: 1024, Efficiency: 0.72, Jitter: 0.02, ReasoningTokens: 40})
}
