package sim

import "time"

// Demo model names (DemoConfig).
const (
	DemoHealthy   = "meta-llama/Llama-3.1-8B-Instruct"
	DemoDegrading = "Qwen/Qwen2.5-14B-Instruct"
	DemoBursty    = "meta-llama/Llama-3.2-3B-Instruct"
	DemoReasoning = "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"
)

// DemoConfig is the setup of ttftop's demo, on loopback ports chosen by
// the OS (read them from URL and DCGMURL after Start):
//   - DemoHealthy: 8B on an H100 with speculative decoding (2 draft
//     tokens, 70 % acceptance: ≈ 2.2 tokens per step, TPOT ≈ 3 ms) and
//     vLLM's MFU counters on, so its MBU is measured, not estimated;
//   - DemoDegrading: 14B on an A100, TPOT ≈ 21 ms until its bandwidth
//     efficiency drops ÷4 from 30 s to 75 s (TPOT ≈ 85 ms, p95 well over a
//     50 ms SLO, DRAM-active ÷4), then recovers;
//   - DemoBursty: 3B on an L4, TPOT ≈ 33 ms, with 24 extra streams for
//     12 s every 40 s (from 10 s): queueing, TTFT spikes and ITL stalls from
//     chunked prefills; its KV pool is small (gpu_memory_utilization
//     0.32, 4096-token context), so bursts preempt;
//   - DemoReasoning: an 8B reasoning model on an H100 that thinks for
//     about 40 tokens before it answers, so TTFT (first thinking token)
//     and the time to the first answer token differ by ≈ 0.3 s; from 80 s
//     to 110 s a slow path holds its requests 400 ms before the engine
//     sees them (a network cause beside the degrading model's GPU
//     slowdown and the bursty one's KV pressure).
//
// Half of the background requests start with one of four shared system
// prompts, and the probes repeat theirs, so the prefix cache hits.
// Each model also has 4 background streams so metrics move without probes.
func DemoConfig() Config {
	return Config{
		Listen:            "127.0.0.1:0",
		DCGMListen:        "127.0.0.1:0",
		Seed:              1,
		Load:              4,
		Models:            append(demoModels(), demoReasoningModel()),
		PrefixCaching:     true,
		SharedPrefixShare: 0.5,
		Scenario: Scenario{Events: []Event{
			{At: 30 * time.Second, Kind: EventBandwidth, Model: DemoDegrading, Factor: 0.25, For: 45 * time.Second},
			{At: 10 * time.Second, Kind: EventBurst, Model: DemoBursty, Streams: 24, For: 12 * time.Second, Every: 40 * time.Second},
			{At: 80 * time.Second, Kind: EventNetworkDelay, Model: DemoReasoning, Delay: 400 * time.Millisecond, For: 30 * time.Second},
		}},
	}
}

// demoModels are DefaultModels with the demo's diagnosis features on.
func demoModels() []ModelSpec {
	models := DefaultModels()
	for i := range models {
		switch models[i].Name {
		case DemoHealthy:
			models[i].SpecTokens, models[i].SpecAcceptRate, models[i].MFUMetrics = 2, 0.7, true
		case DemoBursty:
			models[i].GPUMemUtilization, models[i].MaxModelLen = 0.32, 4096
		}
	}
	return models
}

func demoReasoningModel() ModelSpec {
	return BatchingCurve(ModelSpec{Name: DemoReasoning, Params: 8.03e9, DtypeBytes: 2, KVBytesPerToken: 131072,
		GPU: "H100 SXM", NumGPUs: 1, MaxBatch: 256, MaxQueue: 1024, Efficiency: 0.72, Jitter: 0.02, ReasoningTokens: 40})
}
