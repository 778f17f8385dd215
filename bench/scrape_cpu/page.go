//go:build unix

package main

import (
	"fmt"
	"strings"
)

// page renders a vLLM V1 page for one model and engine, about the size of
// the vllm-v0.10-metrics.txt capture in internal/fixtures/testdata/metrics
// (~500 lines), at tick k.
func page(model string, k int) string {
	ttftBounds := []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "160.0", "640.0", "2560.0", "+Inf"}
	itlBounds := []string{"0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "+Inf"}
	e2eBounds := []string{"0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0", "40.0", "50.0", "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0", "7680.0", "+Inf"}
	tokBounds := []string{"1.0", "2.0", "5.0", "10.0", "20.0", "50.0", "100.0", "200.0", "500.0", "1000.0", "2000.0", "+Inf"}
	var b strings.Builder
	lbl := fmt.Sprintf(`engine="0",model_name="%s"`, model)
	for i := range 60 { // python_*/process_*/http_* families of a real page
		fmt.Fprintf(&b, "# HELP python_info_%d x\n# TYPE python_info_%d gauge\npython_info_%d{implementation=\"CPython\"} 1.0\n", i, i, i)
	}
	gauge := func(name string, v float64) {
		fmt.Fprintf(&b, "# HELP %s g\n# TYPE %s gauge\n%s{%s} %g\n", name, name, name, lbl, v)
	}
	counter := func(name string, v int) {
		base := strings.TrimSuffix(name, "_total")
		fmt.Fprintf(&b, "# HELP %s c\n# TYPE %s counter\n%s{%s} %d.0\n", name, name, name, lbl, v)
		fmt.Fprintf(&b, "# HELP %s_created c\n# TYPE %s_created gauge\n%s_created{%s} 1.7710424574207425e+09\n", base, base, base, lbl)
	}
	hist := func(name string, bounds []string) {
		fmt.Fprintf(&b, "# HELP %s h\n# TYPE %s histogram\n", name, name)
		for i, le := range bounds {
			fmt.Fprintf(&b, "%s_bucket{engine=\"0\",le=\"%s\",model_name=\"%s\"} %d.0\n", name, le, model, k*(i+1))
		}
		fmt.Fprintf(&b, "%s_count{%s} %d.0\n%s_sum{%s} %g\n", name, lbl, k*len(bounds), name, lbl, float64(k)*1.5)
		fmt.Fprintf(&b, "# HELP %s_created h\n# TYPE %s_created gauge\n%s_created{%s} 1.7710424574207425e+09\n", name, name, name, lbl)
	}
	gauge("vllm:num_requests_running", float64(k%8))
	gauge("vllm:num_requests_waiting", 0)
	gauge("vllm:kv_cache_usage_perc", float64(k%10)/10)
	counter("vllm:prompt_tokens_total", 100*k)
	counter("vllm:generation_tokens_total", 1000*k)
	fmt.Fprintf(&b, "# TYPE vllm:request_success_total counter\n")
	for _, r := range []string{"stop", "length", "abort"} {
		fmt.Fprintf(&b, "vllm:request_success_total{engine=\"0\",finished_reason=\"%s\",model_name=\"%s\"} %d.0\n", r, model, k)
	}
	hist("vllm:time_to_first_token_seconds", ttftBounds)
	hist("vllm:inter_token_latency_seconds", itlBounds)
	hist("vllm:time_per_output_token_seconds", itlBounds)
	hist("vllm:request_time_per_output_token_seconds", itlBounds)
	hist("vllm:e2e_request_latency_seconds", e2eBounds)
	hist("vllm:request_queue_time_seconds", e2eBounds)
	hist("vllm:request_prefill_time_seconds", e2eBounds)
	hist("vllm:request_decode_time_seconds", e2eBounds)
	hist("vllm:request_prompt_tokens", tokBounds)
	hist("vllm:request_generation_tokens", tokBounds)
	return b.String()
}
