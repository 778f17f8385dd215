// Package sim is ttftop's built-in, in-process engine simulator: a
// vLLM-compatible OpenAI server whose latencies come from a small model of
// a memory-bandwidth-bound GPU, plus a dcgm-exporter style GPU endpoint.
//
// # Engine model
//
// Each served model has one engine goroutine that runs a continuous
// batching loop on a monotonic step schedule (deadline_k = deadline_{k-1} +
// step_k; a Go timer wakes it ~1.5 ms early, nanosleep and a ~100 µs spin
// finish the wait, so steps start within a few µs of the model's
// schedule). A step
//
//   - admits waiting requests while there is a batch slot (MaxBatch) and
//     free KV blocks; queue overflow (MaxQueue) is answered 429;
//   - schedules one decode token per running sequence and prefill chunks
//     within MaxBatchedTokens (chunked prefill);
//   - lasts (max(memory time, prefill time) + decode compute + overheads)
//     × (1 + jitter), where memory time = weight bytes / (peak bandwidth ×
//     GPUs × Efficiency) + KV bytes of every running sequence / (peak ×
//     GPUs × AttentionEfficiency), prefill time = prefill tokens /
//     PrefillTokensPerSec, decode compute = decoded tokens × 2 × Params /
//     (dense FLOP/s × ComputeEfficiency), and the overheads are
//     StepOverhead + SeqOverhead per sequence (the batching curve, see
//     BatchingCurve; a spec without those fields is bandwidth-only);
//   - ends by appending one token to every sequence that decoded or
//     finished its prefill and waking its consumer (a 1-slot channel per
//     sequence; the consumer drains all pending tokens per wake-up).
//
// So TTFT = queue wait + prefill (for a short prompt, one step), TPOT = step
// time, and TPOT grows with concurrency through the KV, compute and
// per-sequence terms. A reasoning model (ReasoningTokens) spends the
// first tokens of each answer thinking, streamed on chat as
// reasoning_content, so its time to the first answer token trails TTFT. Answer lengths
// and text derive from the seed and the prompt; step jitter from the seed.
//
// # Metrics
//
// GET /metrics renders the vLLM V1 families (model_name, engine="0",
// vLLM's buckets, *_created gauges) or, with MetricsFormat "sglang", the
// sglang: families; values are recorded by the engine at step deadlines,
// so they describe exactly the traffic served.
//
// The DCGM listener exposes one series set per simulated GPU. GPUs are
// numbered across models in Config.Models order (a model with NumGPUs 2
// takes two consecutive indices). As dcgm-exporter does with its Kubernetes
// mapping, every series carries pod, namespace and container labels; pod is
// PodName(served model name), namespace "ttftop-sim", container "vllm".
// Hostname is Config.Hostname on all GPUs, so (Hostname, gpu) is unique and
// GPUs maps it back to the served model.
//
// Server.ScheduleErrors (also GET /sim/stats) reports the simulator's own
// timing error: flush time of each streamed token − its step deadline.
//
// # Scenarios
//
// A Scenario (Go value, YAML via ParseScenario/LoadScenario, or compact
// flags via ParseEvent) schedules prefill slow-downs, bandwidth drops,
// outages (503) and load bursts at offsets from New.
package sim
