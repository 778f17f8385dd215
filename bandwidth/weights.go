package bandwidth

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Weights describe a model for the MBU estimate as a config file writes
// them (an endpoint's weights, a PromQL source's by model); Model is the
// description the estimate uses.
type Weights struct {
	Parameters     float64 `yaml:"parameters"` // e.g. 8e9
	DType          string  `yaml:"dtype"`      // bf16, fp8, int4…
	TensorParallel int     `yaml:"tensor_parallel"`
	// GPU names the GPU for its peak bandwidth: as dcgm-exporter or
	// nvidia-smi report it, or short where unambiguous ("H200").
	GPU string `yaml:"gpu"`
	// PeakBandwidth per GPU overrides the GPU's table peak.
	PeakBandwidth Bandwidth `yaml:"peak_bandwidth"`
	// KVBytesPerToken = 2 × layers × KV heads × head dim × KV dtype bytes;
	// 0 leaves live KV bytes out of MBU (an underestimate at large batch).
	KVBytesPerToken float64 `yaml:"kv_bytes_per_token"`
}

// Model is the MBU description of w, for both the direct scrape (an
// endpoint's weights) and PromQL (a prometheus entry's weights by model).
func (w Weights) Model() Model {
	bytes, _ := DTypeBytes(w.DType) // validate refused an unknown dtype
	return Model{Parameters: w.Parameters, BytesPerParameter: bytes, TensorParallel: w.TensorParallel,
		GPU: w.GPU, PeakBandwidth: float64(w.PeakBandwidth), KVBytesPerToken: w.KVBytesPerToken}
}

// dtypes are the weight dtypes by size in bytes; an empty dtype is bf16.
func dtypes() []struct {
	names []string
	bytes float64
} {
	return []struct {
		names []string
		bytes float64
	}{
		{[]string{"bf16", "fp16", "bfloat16", "float16"}, 2},
		{[]string{"fp32", "float32"}, 4},
		{[]string{"fp8", "int8", "e4m3", "e5m2"}, 1},
		{[]string{"int4", "fp4", "nf4", "awq", "gptq"}, 0.5},
	}
}

// DTypeBytes is the size of one weight of dtype (case-insensitive): 2
// (bf16, fp16, or none given), 4 (fp32), 1 (fp8, int8), 0.5 (int4 and its
// formats); false for a dtype it does not know.
func DTypeBytes(dtype string) (float64, bool) {
	d := strings.ToLower(strings.TrimSpace(dtype))
	if d == "" {
		return 2, true
	}
	for _, t := range dtypes() {
		for _, n := range t.names {
			if n == d {
				return t.bytes, true
			}
		}
	}
	return 0, false
}

// dtypeNames lists the accepted dtypes for an error.
func dtypeNames() string {
	var names []string
	for _, t := range dtypes() {
		names = append(names, t.names...)
	}
	return strings.Join(names, ", ")
}

// WeightsProblem is one invalid weights field: the message and the key
// whose line it is reported at.
type WeightsProblem struct{ Msg, Key string }

// Problems checks w as MBU needs it: a parameter count, a known dtype, a
// tensor-parallel degree of at least 1 when given (tpGiven: the key is
// in the file, or the value was set otherwise), a KV size not negative,
// and a peak: peak_bandwidth, or a GPU the bandwidth table knows.
func (w Weights) Problems(tpGiven bool) []WeightsProblem {
	var out []WeightsProblem
	switch {
	case w.Parameters == 0:
		out = append(out, WeightsProblem{"parameters missing: the model's parameter count, e.g. 8e9", "parameters"})
	case !(w.Parameters > 0) || math.IsInf(w.Parameters, 1):
		out = append(out, WeightsProblem{fmt.Sprintf("parameters %g must be a positive number, e.g. 8e9", w.Parameters), "parameters"})
	}
	if _, ok := DTypeBytes(w.DType); !ok {
		out = append(out, WeightsProblem{fmt.Sprintf("dtype %q unknown: use one of %s", w.DType, dtypeNames()), "dtype"})
	}
	if w.TensorParallel < 0 || (tpGiven && w.TensorParallel < 1) {
		out = append(out, WeightsProblem{fmt.Sprintf("tensor_parallel %d must be at least 1 (the GPUs one replica spans)", w.TensorParallel), "tensor_parallel"})
	}
	if !(w.KVBytesPerToken >= 0) {
		out = append(out, WeightsProblem{fmt.Sprintf("kv_bytes_per_token %g must be 0 (no KV term) or more", w.KVBytesPerToken), "kv_bytes_per_token"})
	}
	if w.PeakBandwidth > 0 {
		return out
	}
	if strings.TrimSpace(w.GPU) == "" {
		out = append(out, WeightsProblem{"gpu or peak_bandwidth missing: name the GPU (e.g. H200, \"H100 SXM\") or give its peak bandwidth (e.g. 3.35TB/s)", "gpu"})
	} else if _, err := Resolve(w.GPU); err != nil {
		out = append(out, WeightsProblem{"gpu: " + err.Error(), "gpu"})
	}
	return out
}

// Bandwidth is a peak memory bandwidth per GPU in bytes per second,
// written as a number (3.35e12) or with a decimal unit ("3.35TB/s",
// ParsePeak).
type Bandwidth float64

// UnmarshalYAML decodes a bandwidth.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParsePeak(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: peak_bandwidth %v", n.Line, err)}}
	}
	*b = Bandwidth(v)
	return nil
}
