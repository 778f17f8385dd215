package sim

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ModelSpec describes one served model and the hardware it runs on. Zero
// fields take the defaults documented per field (applied by New), so a spec
// only needs Name and Params.
type ModelSpec struct {
	Name            string  // served model name (OpenAI "model", metrics model_name)
	Params          float64 // parameter count, e.g. 8.03e9
	DtypeBytes      float64 // bytes per weight; default 2 (bf16)
	KVBytesPerToken float64 // KV-cache bytes per token, all layers; default 131072 (Llama-3.1-8B bf16)
	GPU             string  // key of the GPU table (GPUNames); default "H100 SXM"
	NumGPUs         int     // tensor-parallel degree; default 1
	MaxBatch        int     // max running sequences (vLLM max_num_seqs); default 256
	MaxQueue        int     // max waiting requests before 429; default 1024
	// Efficiency is the fraction of peak DRAM bandwidth a decode step
	// achieves; it is also the DRAM-active ratio of a fully busy engine.
	// Default 0.7.
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

// SpecForSize builds a ModelSpec for a served name and a size such as "8b"
// or "70b". Known sizes use preset architectures and GPUs; other sizes scale
// the 8B numbers (KV grows with the square root of the size, a rough fit to
// Llama/Qwen families).
func SpecForSize(name, size string) (ModelSpec, error) {
	if size == "" {
		size = "8b"
	}
	size = strings.ToLower(size)
	spec := ModelSpec{Name: name, DtypeBytes: 2, Jitter: 0.02}
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
// A100, so their TPOTs (≈31, 7 and 21 ms at batch 1) differ visibly.
func DefaultModels() []ModelSpec {
	return []ModelSpec{
		{Name: "meta-llama/Llama-3.1-8B-Instruct", Params: 8.03e9, DtypeBytes: 2, KVBytesPerToken: 131072,
			GPU: "H100 SXM", NumGPUs: 1, MaxBatch: 256, MaxQueue: 1024, Efficiency: 0.72, Jitter: 0.02},
		{Name: "Qwen/Qwen2.5-14B-Instruct", Params: 14.7e9, DtypeBytes: 2, KVBytesPerToken: 196608,
			GPU: "A100 80GB", NumGPUs: 1, MaxBatch: 128, MaxQueue: 512, Efficiency: 0.7, Jitter: 0.02},
		{Name: "meta-llama/Llama-3.2-3B-Instruct", Params: 3.21e9, DtypeBytes: 2, KVBytesPerToken: 114688,
			GPU: "L4", NumGPUs: 1, MaxBatch: 64, MaxQueue: 256, Efficiency: 0.68, Jitter: 0.02},
	}
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
	defi(&m.MaxBatch, 256)
	defi(&m.MaxQueue, 1024)
	def(&m.Efficiency, 0.7)
	def(&m.PrefillTokensPerSec, math.Round(g.DenseFLOPS*float64(m.NumGPUs)*defaultMFU/(2*m.Params)))
	defi(&m.MaxBatchedTokens, 2048)
	defi(&m.MaxModelLen, 8192)
	defi(&m.MeanOutputTokens, 256)
	def(&m.GPUMemUtilization, gpuMemUtilization)
	if m.SpecTokens > 0 {
		def(&m.SpecAcceptRate, 0.7)
	}
	switch {
	case m.DtypeBytes < 0 || m.KVBytesPerToken < 0 || m.NumGPUs < 0 || m.MaxBatch < 0 || m.MaxQueue < 0:
		return m, g, fmt.Errorf("model %q: negative size field", m.Name)
	case m.Efficiency < 0 || m.Efficiency > 1:
		return m, g, fmt.Errorf("model %q: Efficiency %.3g not in (0,1]", m.Name, m.Efficiency)
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

// DecodeStepTime is the engine model's time for one decode step with
// kvTokens KV tokens resident and the scenario's bandwidth factor (1 =
// healthy): bytes moved / effective bandwidth, in seconds. Zero fields take
// their defaults. Exported so tests and tools can predict TPOT.
func (m ModelSpec) DecodeStepTime(kvTokens int, bwFactor float64) float64 {
	m, g, err := m.withDefaults()
	if err != nil || bwFactor <= 0 {
		return math.Inf(1)
	}
	bytes := m.weightBytes() + float64(kvTokens)*m.KVBytesPerToken
	return bytes / (g.PeakBW * float64(m.NumGPUs) * m.Efficiency * bwFactor)
}
