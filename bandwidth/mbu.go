package bandwidth

import "fmt"

// Model describes one served model replica for the MBU estimate.
type Model struct {
	// Parameters is the parameter count (8.03e9 for Llama-3.1-8B).
	Parameters float64 `json:"parameters" yaml:"parameters"`
	// BytesPerParameter is the weight dtype size: 2 (BF16/FP16), 1
	// (FP8/INT8), 0.5 (INT4).
	BytesPerParameter float64 `json:"bytes_per_parameter" yaml:"bytes_per_parameter"`
	// TensorParallel is the number of GPUs one replica spans (default 1).
	TensorParallel int `json:"tensor_parallel,omitempty" yaml:"tensor_parallel,omitempty"`
	// KVBytesPerToken is 2 × layers × KV heads × head dim × KV dtype bytes
	// (see KVBytesPerToken); 0 leaves the KV term out (an underestimate at
	// large batch).
	KVBytesPerToken float64 `json:"kv_bytes_per_token,omitempty" yaml:"kv_bytes_per_token,omitempty"`
	// KVCapacityTokens overrides the KV capacity read from the engine
	// (vLLM: num_gpu_blocks × block_size).
	KVCapacityTokens float64 `json:"kv_capacity_tokens,omitempty" yaml:"kv_capacity_tokens,omitempty"`
	// GPU is the GPU name, as reported ("NVIDIA H100 80GB HBM3") or short
	// ("H200"), looked up with Resolve.
	GPU string `json:"gpu,omitempty" yaml:"gpu,omitempty"`
	// PeakBandwidth (bytes/s per GPU) overrides the GPU lookup.
	PeakBandwidth float64 `json:"peak_bandwidth,omitempty" yaml:"peak_bandwidth,omitempty"`
}

// WeightBytes returns parameters × bytes per parameter.
func (m Model) WeightBytes() float64 { return m.Parameters * m.BytesPerParameter }

// GPUs returns the tensor-parallel degree (at least 1).
func (m Model) GPUs() int {
	if m.TensorParallel < 1 {
		return 1
	}
	return m.TensorParallel
}

// Peak returns the per-GPU peak bandwidth.
func (m Model) Peak() (float64, error) {
	if m.PeakBandwidth > 0 {
		return m.PeakBandwidth, nil
	}
	if m.GPU == "" {
		return 0, fmt.Errorf("no GPU or peak bandwidth configured")
	}
	g, err := Resolve(m.GPU)
	if err != nil {
		return 0, err
	}
	return g.Peak, nil
}

// KVBytesPerToken returns 2 (K and V) × layers × KV heads × head dim ×
// dtype bytes: 131,072 B for Llama-3.1-8B in BF16 (32, 8, 128, 2).
func KVBytesPerToken(layers, kvHeads, headDim int, dtypeBytes float64) float64 {
	return 2 * float64(layers) * float64(kvHeads) * float64(headDim) * dtypeBytes
}

// Estimate holds the inputs of one MBU estimate.
type Estimate struct {
	WeightBytes float64
	// KVBytes is the live KV cache read per step (all requests).
	KVBytes float64
	// StepSeconds is the mean decode step time (mean ITL).
	StepSeconds float64
	// Peak is the per-GPU peak bandwidth, GPUs the replica's GPU count.
	Peak float64
	GPUs int
}

// AchievedBandwidth returns bytes per step / step time.
func (e Estimate) AchievedBandwidth() float64 {
	return (e.WeightBytes + e.KVBytes) / e.StepSeconds
}

// MBU returns achieved bandwidth / (peak × GPUs), and false when an input
// is missing or not positive (no estimate rather than a misleading 0).
func (e Estimate) MBU() (float64, bool) {
	if e.WeightBytes <= 0 || e.KVBytes < 0 || e.StepSeconds <= 0 || e.Peak <= 0 || e.GPUs < 1 {
		return 0, false
	}
	return e.AchievedBandwidth() / (e.Peak * float64(e.GPUs)), true
}

// ModelFor returns the description of model in models, else the "*"
// entry (any model).
func ModelFor(models map[string]Model, model string) (Model, bool) {
	if m, ok := models[model]; ok {
		return m, true
	}
	m, ok := models["*"]
	return m, ok
}

// Reading is what one interval of a replica's engine metrics gives MBU.
type Reading struct {
	// ReadBytesPerS is the engine's bytes-read counter rate per GPU (vLLM
	// --enable-mfu-metrics); it counts only when HasReadBytes and > 0
	// (the counter is present but 0 while the feature is off).
	ReadBytesPerS float64
	HasReadBytes  bool
	// StepSeconds is the mean decode step time over the interval (ITL
	// Δsum/Δcount); 0 when no token was decoded.
	StepSeconds float64
	// KVTokens is the live KV-cache tokens, when HasKVTokens.
	KVTokens    float64
	HasKVTokens bool
}

// Measured reports whether r has a moving bytes-read counter.
func (r Reading) Measured() bool { return r.HasReadBytes && r.ReadBytesPerS > 0 }

// MBU is one replica's MBU from r: measured (bytes-read rate / per-GPU
// peak; approx false) when the counter moved, else the estimate (approx
// true). ok is false when neither is possible: no decode step, or a KV
// term configured (KVBytesPerToken) with no KV tokens known. err says why
// there is no peak bandwidth.
func (m Model) MBU(r Reading) (value float64, approx, ok bool, err error) {
	if !r.Measured() && r.StepSeconds <= 0 {
		return 0, false, false, nil
	}
	peak, err := m.Peak()
	if err != nil {
		return 0, false, false, err
	}
	if r.Measured() {
		// The counter is per GPU, so the per-GPU peak is the denominator.
		return r.ReadBytesPerS / peak, false, true, nil
	}
	e := Estimate{WeightBytes: m.WeightBytes(), StepSeconds: r.StepSeconds, Peak: peak, GPUs: m.GPUs()}
	if m.KVBytesPerToken > 0 {
		if !r.HasKVTokens {
			return 0, false, false, nil // KV term configured but not measurable: no estimate
		}
		e.KVBytes = r.KVTokens * m.KVBytesPerToken
	}
	v, ok := e.MBU()
	return v, true, ok, nil
}
