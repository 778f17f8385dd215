package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ttftop/ttftop/bandwidth"
)

// Model is the MBU description of w, for both the direct scrape (an
// endpoint's weights) and PromQL (a prometheus entry's weights by model).
func (w Weights) Model() bandwidth.Model {
	bytes, _ := DTypeBytes(w.DType) // validate refused an unknown dtype
	return bandwidth.Model{Parameters: w.Parameters, BytesPerParameter: bytes, TensorParallel: w.TensorParallel,
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

// weightsProblem is one invalid weights field: the message and the key
// whose line it is reported at.
type weightsProblem struct{ msg, key string }

// problems checks w as MBU needs it: a parameter count, a known dtype, a
// tensor-parallel degree of at least 1 when given (tpGiven: the key is
// in the file, or the value was set otherwise), a KV size not negative,
// and a peak: peak_bandwidth, or a GPU the bandwidth table knows.
func (w Weights) problems(tpGiven bool) []weightsProblem {
	var out []weightsProblem
	switch {
	case w.Parameters == 0:
		out = append(out, weightsProblem{"parameters missing: the model's parameter count, e.g. 8e9", "parameters"})
	case !(w.Parameters > 0) || math.IsInf(w.Parameters, 1):
		out = append(out, weightsProblem{fmt.Sprintf("parameters %g must be a positive number, e.g. 8e9", w.Parameters), "parameters"})
	}
	if _, ok := DTypeBytes(w.DType); !ok {
		out = append(out, weightsProblem{fmt.Sprintf("dtype %q unknown: use one of %s", w.DType, dtypeNames()), "dtype"})
	}
	if w.TensorParallel < 0 || (tpGiven && w.TensorParallel < 1) {
		out = append(out, weightsProblem{fmt.Sprintf("tensor_parallel %d must be at least 1 (the GPUs one replica spans)", w.TensorParallel), "tensor_parallel"})
	}
	if !(w.KVBytesPerToken >= 0) {
		out = append(out, weightsProblem{fmt.Sprintf("kv_bytes_per_token %g must be 0 (no KV term) or more", w.KVBytesPerToken), "kv_bytes_per_token"})
	}
	if w.PeakBandwidth > 0 {
		return out
	}
	if strings.TrimSpace(w.GPU) == "" {
		out = append(out, weightsProblem{"gpu or peak_bandwidth missing: name the GPU (e.g. H200, \"H100 SXM\") or give its peak bandwidth (e.g. 3.35TB/s)", "gpu"})
	} else if _, err := bandwidth.Resolve(w.GPU); err != nil {
		out = append(out, weightsProblem{"gpu: " + err.Error(), "gpu"})
	}
	return out
}

// Bandwidth is a peak memory bandwidth per GPU in bytes per second,
// written as a number (3.35e12) or with a decimal unit ("3.35TB/s",
// bandwidth.ParsePeak).
type Bandwidth float64

// UnmarshalYAML decodes a bandwidth.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	v, err := bandwidth.ParsePeak(n.Value)
	if err != nil {
		return valueError(n, fmt.Errorf("peak_bandwidth %w", err))
	}
	*b = Bandwidth(v)
	return nil
}

// weightsErrors validates the endpoints' and the prometheus entries'
// weights, each problem at its key's line; the models of a prometheus
// entry in name order, so the errors read the same every run.
func (c *Config) weightsErrors() []string {
	var errs []string
	check := func(w Weights, what string, path ...any) {
		tp := append(append([]any{}, path...), "tensor_parallel")
		for _, p := range w.problems(w.TensorParallel != 0 || c.inFile(tp...)) {
			if msg, ok := c.at(what+": "+p.msg, append(append([]any{}, path...), p.key)...); ok {
				errs = append(errs, msg)
			}
		}
	}
	for i, e := range c.Endpoints {
		if e.Weights != nil {
			check(*e.Weights, fmt.Sprintf("endpoints[%d] (%s): weights", i, e.Prefix()), "endpoints", i, "weights")
		}
	}
	for i, p := range c.Prometheus {
		models := make([]string, 0, len(p.Weights))
		for m := range p.Weights {
			models = append(models, m)
		}
		slices.Sort(models)
		for _, m := range models {
			check(p.Weights[m], fmt.Sprintf("prometheus[%d]: weights[%q]", i, m), "prometheus", i, "weights", m)
		}
	}
	return errs
}
