package sim

import "time"

// DemoPD is the disaggregated demo model's name (DemoPDConfig).
const DemoPD = "meta-llama/Llama-3.1-70B-Instruct"

// DemoPDConfig is the demo's disaggregated model (`ttftop demo --pd`):
// Llama-3.1-70B on four H100s per worker, one prefill and two decode
// workers behind the llm-d router, with 6 client streams through it and
// two LoRA adapters. Its KV transfers (≈ 12 ms for a 300-token prompt at
// 10 GB/s) run 8× slower from 40 s for 30 s, every 2 minutes, so the
// kv_transfer cause and the router's TTFT show it.
func DemoPDConfig() PDConfig {
	return PDConfig{
		Model: BatchingCurve(ModelSpec{Name: DemoPD, Params: 70.6e9, KVBytesPerToken: 2 * 80 * 8 * 128 * 2,
			GPU: "H100 SXM", NumGPUs: 4, Jitter: 0.02, Adapters: []string{"sql-lora", "chat-lora"}}),
		Prefill: 1, Decode: 2, Load: 6, Seed: 1, CoarseTiming: true,
		Scenario: Scenario{Events: []Event{{At: 40 * time.Second, Kind: EventKVSlow, Factor: 8, For: 30 * time.Second, Every: 2 * time.Minute}}},
	}
}
