package sim

import (
	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// histogram is a Prometheus-style histogram with fixed upper bounds. It is
// not safe for concurrent use: the owning modelMetrics lock guards it, so
// the engine can record a whole step under one lock.
type histogram struct {
	bounds []float64
	// les are the bounds as le label values ("0.001", …, "+Inf"),
	// rendered once: every scrape writes them for every model.
	les    []string
	counts []uint64 // per bucket, not cumulative; last is +Inf
	sum    float64
	count  uint64
}

func newHistogram(bounds []float64) *histogram {
	les := make([]string, len(bounds)+1)
	for i, v := range bounds {
		les[i] = pyFloat(v)
	}
	les[len(bounds)] = "+Inf"
	return &histogram{bounds: bounds, les: les, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.count++
}

// Bucket boundaries copied from the engines (docs/engines.md and the
// captures in internal/fixtures/testdata/metrics) so dashboards and
// ttftop's quantile maths see real layouts.
var (
	vllmTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITLBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	vllmE2EBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	vllmIterationBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	vllmParamsNBuckets   = []float64{1, 2, 5, 10, 20}

	// SGLang as in fixtures/metrics/sglang-metrics.txt (0.4-era layout).
	sglangTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 25.0, 30.0}
	sglangE2EBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0}
	sglangTPOTBuckets = []float64{0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1,
		0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
)

// vllmTPOTBuckets are vLLM's per-request TPOT bounds, from the engines
// table: the sweep's KEDA trigger reads the same bounds to know what the
// histogram can resolve.
func vllmTPOTBuckets() []float64 {
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	return spec.Signals[telemetry.TPOT][0].Buckets
}

// build125Buckets mirrors vLLM's build_1_2_5_buckets(max_model_len):
// 1, 2, 5, 10, 20, 50, ... up to max.
func build125Buckets(maxValue int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxValue) {
				return out
			}
			out = append(out, v)
		}
	}
}
