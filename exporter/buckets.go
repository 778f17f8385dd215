package exporter

// Bucket upper bounds copied from vLLM V1 (vllm/v1/metrics/loggers.py;
// see docs/engines.md): identical bounds let vLLM dashboards and
// recording rules apply unchanged, and keep vLLM's SLO thresholds exact.
// They are functions returning fresh slices, not package variables, so no
// caller can change the layout of another exporter.

// TTFTBuckets returns vllm:time_to_first_token_seconds's bounds.
func TTFTBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
}

// ITLBuckets returns vllm:inter_token_latency_seconds's bounds, which vLLM
// also uses for vllm:request_time_per_output_token_seconds (TPOT).
func ITLBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
}

// E2EBuckets returns vllm:e2e_request_latency_seconds's bounds.
func E2EBuckets() []float64 {
	return []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
}
