package config

import (
	"strings"

	"github.com/tokentop/tokentop/bandwidth"
)

// Model is the MBU description of w, for both the direct scrape (an
// endpoint's weights) and PromQL (a prometheus entry's weights by model).
func (w Weights) Model() bandwidth.Model {
	return bandwidth.Model{Parameters: w.Parameters, BytesPerParameter: DTypeBytes(w.DType),
		TensorParallel: w.TensorParallel, GPU: w.GPU, KVBytesPerToken: w.KVBytesPerToken}
}

// DTypeBytes is the size of one weight of dtype: 4 (fp32), 1 (fp8, int8),
// 0.5 (int4 and its formats), else 2 (bf16, fp16).
func DTypeBytes(dtype string) float64 {
	switch strings.ToLower(dtype) {
	case "fp32", "float32":
		return 4
	case "fp8", "int8", "e4m3", "e5m2":
		return 1
	case "int4", "fp4", "nf4", "awq", "gptq":
		return 0.5
	default: // bf16, fp16
		return 2
	}
}
