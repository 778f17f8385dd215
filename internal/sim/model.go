package sim

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ModelSpec describes one served model and the hardware it runs on. Zero
// fields take the defaults documented per field (applied by New), so a spec
// only needs Name and Params.
type ModelSpec struct {
	Name string // served model name (OpenAI "model", metrics model_name)
	// Adapters are LoRA adapters served on this base model (vLLM
	// --lora-modules): listed by /v1/models with the base as parent,
	// and a request naming one is served by the base's engine, counted
	// under the base's model_name as vLLM does.
	Adapters        []string
	Params          float64 // parameter count, e.g. 8.03e9
	DtypeBytes      float64 // bytes per weight; default 2 (bf16)
	KVBytesPerToken float64 // KV-cache bytes per token, all layers; default 131072 (Llama-3.1-8B bf16)
	GPU             string  // key of the GPU table (GPUNames); default "H100 SXM"
	NumGPUs         int     // tensor-parallel degree; default 1
	MaxBatch        int     // max running sequences (vLLM max_num_seqs); default 256
	MaxQueue        int     // max waiting requests before 429; default 1024
	// Efficiency is the fraction of peak DRAM bandwidth a decode step
	// achieves reading the weights; without the batching-curve terms it is
	// also the DRAM-active ratio of a fully busy engine (with them, compute
	// and overheads take a share of each step and DRAM-active falls below
	// it). Default 0.7.
	Efficiency          float64
	PrefillTokensPerSec float64 // compute-bound prefill rate; default from GPU FLOPS at 45% MFU
	MaxBatchedTokens    int     // per-step token budget (chunked prefill); default 2048
	MaxModelLen         int     // context limit; default 8192
	MeanOutputTokens    int     // median length of a naturally stopping answer; default 256
	// Jitter is the relative standard deviation of each step time (0 =
	// none). Presets use 0.02 so curves look alive; tests keep 0.
	Jitter float64
	// GPUMemUtilization is vLLM's --gpu-memory-utilization: the share of
	// GPU memory for weights and KV cache; default 0.9. Lower values give a
	// small KV pool that preempts under load.
	GPUMemUtilization float64
	// SpecTokens turns on speculative decoding with this many draft tokens
	// per decode step (0 = off). Each draft token is accepted with
	// probability SpecAcceptRate (default 0.7) if the previous one was, and
	// every accepted token is emitted in the same step, after the one the
	// target model always produces. The step time does not include the
	// draft model.
	SpecTokens     int
	SpecAcceptRate float64
	// MFUMetrics exposes vLLM's --enable-mfu-metrics counters (estimated
	// FLOPs and bytes read and written per GPU).
	MFUMetrics bool
	// DPRanks is vLLM's --data-parallel-size: the model is served by this
	// many engines (ranks) of its own, each with its GPUs, batch, KV pool
	// and counters, labelled engine="0", "1"… on /metrics (SGLang format:
	// dp_rank). A request goes to the rank with the least load (waiting ×
	// 4 + running, as vLLM's DP load balancer scores it), ties in turn. A
	// scenario event with Rank set touches one rank only. Default 1.
	DPRanks int

	// ReasoningTokens makes a reasoning model: each answer starts with a
	// thinking phase of about this many tokens (log-normal, seeded by the
	// prompt), streamed on OpenAI chat as delta.reasoning_content and
	// counted in usage.completion_tokens_details.reasoning_tokens, as vLLM
	// does with a reasoning parser. 0 = answers at once.
	ReasoningTokens int

	// The batching curve: what makes a step longer as the batch grows,
	// beyond the weights every step streams (see stepSeconds). Zero turns
	// a term off, so a hand-made spec stays a pure bandwidth model; the
	// presets (DefaultModels, SpecForSize) set all of them from
	// BatchingCurve.

	// AttentionEfficiency is the fraction of peak bandwidth the attention
	// kernels reach reading the live KV cache (paged, scattered blocks);
	// default Efficiency.
	AttentionEfficiency float64
	// ComputeEfficiency is the fraction of dense FLOP/s the decode
	// matmuls reach; each decoded token costs 2 × Params FLOPs.
	ComputeEfficiency float64
	// StepOverhead is fixed time per step: scheduling, kernel launches,
	// the GPU→CPU sync of sampled tokens.
	StepOverhead time.Duration
	// SeqOverhead is time per sequence in the step: sampling, output
	// processing and detokenisation on the CPU.
	SeqOverhead time.Duration
}

// BatchingCurve returns spec with the batching-curve terms of a vLLM-like
// engine: attention at 55 % of peak bandwidth, decode matmuls at 50 % of
// dense FLOP/s, 300 µs per step and 10 µs per sequence.
//
// Calibration (docs/sweep.md has the table). For Llama-3.1-8B bf16 on
// one H100 SXM it predicts a TPOT of 7.0 ms at 1 stream, 7.8 ms at 16 and
// 10.4 ms at 64 (short prompts, ~150 live KV tokens each), against
// published measurements:
//   - InferenceBench "concurrency sweep" recipe (yobitelcomm.github.io/bench,
//     H100-80GB-HBM3, vLLM 0.21.0, fp16, chatbot-short): TPOT p50 6.48 ms
//     at 1, 6.59 at 4, 10.94 at 16;
//   - NVIDIA NIM LLM benchmarking, Llama-3.1-8B-Instruct NIM 1.8.0 on H100
//     (docs.nvidia.com/nim/benchmarking/llm, "Performance"): ITL 4.63 ms
//     at 1, 5.19 at 25, 5.91 at 50, 7.57 at 100, 12.65 at 200 (fp8
//     weights, so a lower base; the slope, ≈0.03 ms per extra stream up
//     to 100, is what the per-sequence terms reproduce).
//
// The published curves bend more steeply where prompts are long (their
// KV term), which the simulator reproduces through the KV bytes.
func BatchingCurve(spec ModelSpec) ModelSpec {
	spec.AttentionEfficiency = 0.55
	spec.ComputeEfficiency = 0.5
	spec.StepOverhead = 300 * time.Microsecond
	spec.SeqOverhead = 10 * time.Microsecond
	return spec
}

const (
	blockSize         = 16  // vLLM KV block size in tokens
	gpuMemUtilization = 0.9 // vLLM --gpu-memory-utilization default
	defaultMFU        = 0.45
)

// sizePreset holds architecture numbers of representative open models so
// `--model name:70b` yields plausible weight and KV sizes.
type sizePreset struct {
	params  float64
	kv      float64 // bytes/token bf16: 2 (K,V) × layers × kv_heads × head_dim × 2 B
	gpu     string
	numGPUs int
}

var sizePresets = map[string]sizePreset{
	"1b":  {1.24e9, 2 * 16 * 8 * 64 * 2, "L4", 1},    // Llama-3.2-1B
	"3b":  {3.21e9, 2 * 28 * 8 * 128 * 2, "L4", 1},   // Llama-3.2-3B
	"7b":  {7.62e9, 2 * 28 * 4 * 128 * 2, "L40S", 1}, // Qwen2.5-7B
	"8b":  {8.03e9, 2 * 32 * 8 * 128 * 2, "H100 SXM", 1},
	"14b": {14.7e9, 2 * 48 * 8 * 128 * 2, "A100 80GB", 1},
	"32b": {32.8e9, 2 * 64 * 8 * 128 * 2, "H200", 1},
	"70b": {70.6e9, 2 * 80 * 8 * 128 * 2, "H100 SXM", 4},
}

var sizeRE = regexp.MustCompile(`^(?i)(\d+(?:\.\d+)?)b$`)

// reasoningFamily reports whether a served name belongs to a model family
// that thinks before it answers.
func reasoningFamily(name string) bool {
	name = strings.ToLower(name)
	for _, m := range [...]string{"-r1", "qwq", "think", "reason", "gpt-oss", "magistral"} {
		if strings.Contains(name, m) {
			return true
		}
	}
	return false
}

// defaultReasoningTokens is how long a model SpecForSize takes for a
// reasoning one thinks, about.
const defaultReasoningTokens = 64

// SpecForSize builds a ModelSpec for a served name and a size such as "8b"
// or "70b". Known sizes use preset architectures and GPUs; other sizes scale
// the 8B numbers (KV grows with the square root of the size, a rough fit to
// Llama/Qwen families). A name of a reasoning family (DeepSeek-R1, QwQ,
// "thinking", gpt-oss, …) thinks for about 64 tokens first.
func SpecForSize(name, size string) (ModelSpec, error) {
	if size == "" {
		size = "8b"
	}
	size = strings.ToLower(size)
	spec := BatchingCurve(ModelSpec{Name: name, DtypeBytes: 2, Jitter: 0.02})
	if reasoningFamily(name) {
		spec.ReasoningTokens = defaultReasoningTokens
	}
	if p, ok := sizePresets[size]; ok {
		spec.Params, spec.KVBytesPerToken, spec.GPU, spec.NumGPUs = p.params, p.kv, p.gpu, p.numGPUs
		return spec, nil
	}
	m := sizeRE.FindStringSubmatch(size)
	if m == nil {
		return ModelSpec{}, fmt.Errorf("model %q: size %q is not like 8b or 70b", name, size)
	}
	b, _ := strconv.ParseFloat(m[1], 64)
	if b <= 0 || b > 2000 {
		return ModelSpec{}, fmt.Errorf("model %q: size %q out of range", name, size)
	}
	spec.Params = b * 1e9
	spec.KVBytesPerToken = math.Round(131072 * math.Sqrt(b/8))
	// Enough H100s to hold the weights at 60% of memory, like a TP deployment.
	spec.GPU = "H100 SXM"
	spec.NumGPUs = int(math.Ceil(spec.Params * 2 / (0.6 * 80e9)))
	for _, tp := range []int{1, 2, 4, 8} {
		if tp >= spec.NumGPUs {
			spec.NumGPUs = tp
			break
		}
	}
	if spec.NumGPUs > 8 {
		return ModelSpec{}, fmt.Errorf("model %q: %s does not fit on 8 GPUs", name, size)
	}
	return spec, nil
}

// DefaultModels returns three models of different sizes on different GPUs:
// a small model on a bandwidth-poor L4, an 8B on an H100 and a 14B on an
// A100, so their TPOTs (≈31, 7 and 21 ms at batch 1) differ visibly. All
// bend with the batch (BatchingCurve).
func DefaultModels() []ModelSpec {
	models := []ModelSpec{
		{Name: "meta-llama/Llama-3.1-8B-Instruct", Params: 8.03e9, DtypeBytes: 2, KVBytesPerToken: 131072,
			GPU: "H100 SXM", NumGPUs: 1, MaxBatch: 256, MaxQueue: 1024, Efficiency: 0.72, Jitter: 0.02},
		{Name: "Qwen/Qwen2.5-14B-Instruct", Params: 14.7e9, DtypeBytes: 2, KVBytesPerToken: 196608,
			GPU: "A100 80GB", NumGPUs: 1, MaxBatch: 128, MaxQueue: 512, Efficiency: 0.7, Jitter: 0.02},
		{Name: "meta-llama/Llama-3.2-3B-Instruct", Params: 3.21e9, DtypeBytes: 2, KVBytesPerToken: 114688,
			GPU: "L4", NumGPUs: 1, MaxBatch: 64, MaxQueue: 256, Efficiency: 0.68, Jitter: 0.02},
	}
	for i := range models {
		models[i] = BatchingCurve(models[i])
	}
	return models
}

// withDefaults fills zero fields and validates the spec against its GPU.
func (m ModelSpec) withDefaults() (ModelSpec, GPU, error) {
	if strings.TrimSpace(m.Name) == "" {
		return m, GPU{}, fmt.Errorf("model spec without a name")
	}
	if m.Params <= 0 {
		return m, GPU{}, fmt.Errorf("model %q: Params must be > 0", m.Name)
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	defi := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&m.DtypeBytes, 2)
	def(&m.KVBytesPerToken, 131072)
	if m.GPU == "" {
		m.GPU = "H100 SXM"
	}
	g, err := LookupGPU(m.GPU)
	if err != nil {
		return m, g, fmt.Errorf("model %q: %w", m.Name, err)
	}
	m.GPU = g.Name
	defi(&m.NumGPUs, 1)
	defi(&m.DPRanks, 1)
	defi(&m.MaxBatch, 256)
	defi(&m.MaxQueue, 1024)
	def(&m.Efficiency, 0.7)
	def(&m.AttentionEfficiency, m.Efficiency)
	def(&m.PrefillTokensPerSec, math.Round(g.DenseFLOPS*float64(m.NumGPUs)*defaultMFU/(2*m.Params)))
	defi(&m.MaxBatchedTokens, 2048)
	defi(&m.MaxModelLen, 8192)
	defi(&m.MeanOutputTokens, 256)
	def(&m.GPUMemUtilization, gpuMemUtilization)
	if m.SpecTokens > 0 {
		def(&m.SpecAcceptRate, 0.7)
	}
	switch {
	case m.DtypeBytes < 0 || m.KVBytesPerToken < 0 || m.NumGPUs < 0 || m.MaxBatch < 0 || m.MaxQueue < 0 || m.ReasoningTokens < 0 || m.DPRanks < 0:
		return m, g, fmt.Errorf("model %q: negative size field", m.Name)
	case m.Efficiency < 0 || m.Efficiency > 1:
		return m, g, fmt.Errorf("model %q: Efficiency %.3g not in (0,1]", m.Name, m.Efficiency)
	case m.AttentionEfficiency < 0 || m.AttentionEfficiency > 1 || m.ComputeEfficiency < 0 || m.ComputeEfficiency > 1:
		return m, g, fmt.Errorf("model %q: AttentionEfficiency or ComputeEfficiency not in [0,1]", m.Name)
	case m.StepOverhead < 0 || m.SeqOverhead < 0:
		return m, g, fmt.Errorf("model %q: negative step overhead", m.Name)
	case m.PrefillTokensPerSec < 0 || m.Jitter < 0 || m.Jitter > 0.3:
		return m, g, fmt.Errorf("model %q: bad PrefillTokensPerSec or Jitter", m.Name)
	case m.GPUMemUtilization < 0 || m.GPUMemUtilization > 1 || m.SpecTokens < 0 || m.SpecTokens > 16 ||
		m.SpecAcceptRate < 0 || m.SpecAcceptRate > 1:
		return m, g, fmt.Errorf("model %q: GPUMemUtilization, SpecTokens (≤ 16) or SpecAcceptRate out of range", m.Name)
	case m.MaxBatchedTokens < m.MaxBatch:
		return m, g, fmt.Errorf("model %q: MaxBatchedTokens %d < MaxBatch %d", m.Name, m.MaxBatchedTokens, m.MaxBatch)
	}
	if kvBlocks(m, g) < 2*m.MaxModelLen/blockSize {
		return m, g, fmt.Errorf("model %q: %.1f GB of weights leave too little KV cache on %d× %s",
			m.Name, m.weightBytes()/1e9, m.NumGPUs, g.Name)
	}
	return m, g, nil
}

// weightBytes is what every decode step streams from DRAM.
func (m ModelSpec) weightBytes() float64 { return m.Params * m.DtypeBytes }

// kvBlocks mirrors vLLM's profiling: the KV pool is what is left of
// gpu_memory_utilization × memory after the weights (activations ignored).
func kvBlocks(m ModelSpec, g GPU) int {
	util := m.GPUMemUtilization
	if util == 0 {
		util = gpuMemUtilization
	}
	total := float64(g.MemMiB) * (1 << 20) * float64(m.NumGPUs) * util
	free := total - m.weightBytes()
	if free <= 0 || m.KVBytesPerToken <= 0 {
		return 0
	}
	return int(free / (m.KVBytesPerToken * blockSize))
}

// DecodeStepTime is the engine model's time for one decode step of a
// single sequence with kvTokens KV tokens resident and the scenario's
// bandwidth factor (1 = healthy), in seconds: BatchStepTime with a batch
// of 1. Zero fields take their defaults. Exported so tests and tools can
// predict TPOT.
func (m ModelSpec) DecodeStepTime(kvTokens int, bwFactor float64) float64 {
	return m.BatchStepTime(1, kvTokens, bwFactor)
}

// BatchStepTime is the time of a decode-only step of batch sequences that
// hold kvTokens KV tokens in all, in seconds (see stepSeconds): the TPOT
// that batch sees.
func (m ModelSpec) BatchStepTime(batch, kvTokens int, bwFactor float64) float64 {
	m, g, err := m.withDefaults()
	if err != nil || bwFactor <= 0 || batch < 1 {
		return math.Inf(1)
	}
	_, step := m.stepSeconds(g, batch, batch, kvTokens, 0, effects{bwFactor: bwFactor, prefillFactor: 1})
	return step
}

// stepSeconds is the roofline-plus-overheads time of one engine step that
// decodes `decodes` sequences, holds seqs sequences in all (decoding or
// prefilling), reads kvTokens KV tokens and prefills prefillTokens:
//
//	memory  = weight bytes / (peak × Efficiency) + KV bytes / (peak × AttentionEfficiency)
//	compute = decodes × 2 × Params / (dense FLOP/s × ComputeEfficiency)
//	step    = max(memory, prefill tokens / PrefillTokensPerSec) + compute
//	          + StepOverhead + seqs × SeqOverhead
//
// Memory and prefill overlap (a mixed step is bound by the slower); the
// decode matmuls' compute, small-batch GEMMs that do not hide behind the
// weight reads, and the CPU work add. memTime is the memory part alone
// (what DCGM's memory-copy utilisation sees as busy).
func (m ModelSpec) stepSeconds(g GPU, decodes, seqs, kvTokens, prefillTokens int, fx effects) (memTime, step float64) {
	peak := g.PeakBW * float64(m.NumGPUs)
	memTime = m.weightBytes()/(peak*m.Efficiency*fx.bwFactor) +
		float64(kvTokens)*m.KVBytesPerToken/(peak*m.AttentionEfficiency*fx.bwFactor)
	prefillTime := float64(prefillTokens) * fx.prefillFactor / m.PrefillTokensPerSec
	step = max(memTime, prefillTime)
	if m.ComputeEfficiency > 0 {
		step += float64(decodes) * 2 * m.Params / (g.DenseFLOPS * float64(m.NumGPUs) * m.ComputeEfficiency)
	}
	step += m.StepOverhead.Seconds() + float64(seqs)*m.SeqOverhead.Seconds()
	return memTime, step
}
