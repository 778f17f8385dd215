package scrape

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// vLLM 0.27's real page has the waiting reasons and the prompt-token
// sources: deferred waiting is its own series (not all waiting), and the
// prompt tokens fed by KV transfer are the external_kv_transfer series
// only (not the locally computed ones). The capture's values are 0; the
// second part moves them on a copy.
func TestDisaggNamesVLLMv027Capture(t *testing.T) {
	raw := readFixture(t, "vllm-v0.27-xpu-specdecode-mfu-metrics.txt")
	obs := scrapePages(t, Config{}, freshPage(raw), raw)
	ep := onlyEndpoint(t, obs)
	checkSample(t, obs, ep, telemetry.WaitingDeferred, 0)
	checkSample(t, obs, ep, telemetry.KVTransferPromptTPS, 0)
	for _, sig := range []telemetry.Signal{telemetry.KVTransferTime, telemetry.KVTransferBytes, telemetry.KVTransferFailures} {
		if got := append(find(obs, telemetry.KindSample, ep, sig), find(obs, telemetry.KindHistogram, ep, sig)...); len(got) != 0 {
			t.Errorf("%s from a page without a KV connector: %s", sig, dump(got))
		}
	}

	const lbl = `{engine="0",model_name="qwen38-fp8",`
	set := func(page, series, v string) string {
		t.Helper()
		line := "vllm:" + series + " "
		i := strings.Index(page, line)
		if i < 0 {
			t.Fatalf("no %q in the capture", line)
		}
		end := i + strings.IndexByte(page[i:], '\n')
		return page[:i] + line + v + page[end:]
	}
	moved := set(raw, "num_requests_waiting_by_reason"+lbl+`reason="capacity"}`, "3.0")
	moved = set(moved, "num_requests_waiting_by_reason"+lbl+`reason="deferred"}`, "2.0")
	moved = set(moved, "num_requests_waiting"+lbl[:len(lbl)-1]+"}", "5.0")
	moved = set(moved, "prompt_tokens_by_source_total"+lbl+`source="external_kv_transfer"}`, "4096.0")
	moved = set(moved, "prompt_tokens_by_source_total"+lbl+`source="local_compute"}`, "90112.0") // +2048
	obs = scrapePages(t, Config{}, raw, moved)
	ep = onlyEndpoint(t, obs)
	checkSample(t, obs, ep, telemetry.WaitingDeferred, 2)
	checkSample(t, obs, ep, telemetry.Waiting, 5)
	checkSample(t, obs, ep, telemetry.KVTransferPromptTPS, 4096) // not local_compute's 2048
}

// nixlPage is a vLLM decode worker's page with the NIXL connector's
// families as vLLM's NixlPromMetrics registers them (histograms
// nixl_xfer_time_seconds and nixl_bytes_transferred, counter
// nixl_num_failed_transfers; labels model_name, engine). Table-generated:
// no capture of them was found.
func nixlPage(transfers, seconds, bytes, failed string) string {
	const l = `engine="0",model_name="m"`
	return `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{` + l + `} 1.0
# TYPE vllm:nixl_xfer_time_seconds histogram
vllm:nixl_xfer_time_seconds_bucket{` + l + `,le="0.01"} ` + transfers + `
vllm:nixl_xfer_time_seconds_bucket{` + l + `,le="+Inf"} ` + transfers + `
vllm:nixl_xfer_time_seconds_count{` + l + `} ` + transfers + `
vllm:nixl_xfer_time_seconds_sum{` + l + `} ` + seconds + `
# TYPE vllm:nixl_bytes_transferred histogram
vllm:nixl_bytes_transferred_bucket{` + l + `,le="+Inf"} ` + transfers + `
vllm:nixl_bytes_transferred_count{` + l + `} ` + transfers + `
vllm:nixl_bytes_transferred_sum{` + l + `} ` + bytes + `
# TYPE vllm:nixl_num_failed_transfers counter
vllm:nixl_num_failed_transfers_total{` + l + `} ` + failed + `
`
}

// KV transfers of a vLLM worker with the NIXL connector: the transfer
// time per transfer, the bytes per second, the failures per second.
func TestNIXLTransferSignals(t *testing.T) {
	obs := scrapePages(t, Config{}, nixlPage("10", "0.05", "1e9", "1"), nixlPage("30", "0.15", "4e9", "3"))
	ep := onlyEndpoint(t, obs)
	h := one(t, obs, telemetry.KindHistogram, ep, telemetry.KVTransferTime)
	if n := h.Buckets[len(h.Buckets)-1].Count; n != 20 || !near(h.Value, 0.1) {
		t.Errorf("KV transfer time increment: %v transfers, %v s; want 20 and 0.1", n, h.Value)
	}
	checkSample(t, obs, ep, telemetry.KVTransferBytes, 3e9)
	checkSample(t, obs, ep, telemetry.KVTransferFailures, 2)
}

// SGLang's P/D families: the transfer latency histogram is in ms (read in
// seconds), the failed transfers a counter. Table-generated from SGLang's
// production_metrics.md.
func TestSGLangTransferSignals(t *testing.T) {
	page := func(n, ms, failed string) string {
		return `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m"} 1
# TYPE sglang:kv_transfer_latency_ms histogram
sglang:kv_transfer_latency_ms_bucket{le="10.0",model_name="m"} ` + n + `
sglang:kv_transfer_latency_ms_bucket{le="+Inf",model_name="m"} ` + n + `
sglang:kv_transfer_latency_ms_count{model_name="m"} ` + n + `
sglang:kv_transfer_latency_ms_sum{model_name="m"} ` + ms + `
# TYPE sglang:num_transfer_failed_reqs_total counter
sglang:num_transfer_failed_reqs_total{model_name="m"} ` + failed + `
`
	}
	obs := scrapePages(t, Config{}, page("4", "20", "0"), page("8", "45", "1"))
	ep := onlyEndpoint(t, obs)
	h := one(t, obs, telemetry.KindHistogram, ep, telemetry.KVTransferTime)
	if n := h.Buckets[len(h.Buckets)-1].Count; n != 4 || !near(h.Value, 0.025) {
		t.Errorf("KV transfer time increment: %v transfers, %v s; want 4 and 0.025 (25 ms)", n, h.Value)
	}
	if b := h.Buckets[0]; !near(b.UpperBound, 0.01) {
		t.Errorf("first bound %v s, want 0.01 (10 ms)", b.UpperBound)
	}
	checkSample(t, obs, ep, telemetry.KVTransferFailures, 1)
}

// routerPage is the llm-d router's (EPP) page, table-generated from its
// metrics.go: the request histograms per model_name and target_model_name,
// the request and error counters; with old set, the Gateway API Inference
// Extension's inference_objective_* names the router still writes beside
// them (here with other values, so a mix-up shows).
func routerPage(n int, old bool) string {
	var b strings.Builder
	hist := func(name string, count int, sum float64) {
		fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
		for _, target := range []string{"base", "adapter-a"} {
			l := `model_name="m",target_model_name="` + target + `"`
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"0.1\"} %d\n%s_bucket{%s,le=\"+Inf\"} %d\n", name, l, count, name, l, count)
			fmt.Fprintf(&b, "%s_sum{%s} %g\n%s_count{%s} %d\n", name, l, sum, name, l, count)
		}
	}
	counter := func(name string, v int) {
		fmt.Fprintf(&b, "# TYPE %s counter\n%s{model_name=\"m\",target_model_name=\"base\"} %d\n", name, name, v)
	}
	hist("llm_d_epp_request_ttft_seconds", n, 0.05*float64(n))
	hist("llm_d_epp_request_streaming_tpot_seconds", n, 0.01*float64(n))
	counter("llm_d_epp_request_total", 2*n)
	counter("llm_d_epp_request_error_total", n/2)
	if old {
		hist("inference_objective_request_ttft_seconds", 3*n, 0.5*float64(n))
		counter("inference_objective_request_total", 7*n)
	}
	return b.String()
}

// The router's page is its own engine: TTFT and TPOT summed over the
// target models (base and adapter), the error share from its counters,
// the current names winning over the old ones written beside them, and
// the old names read where they are the only ones.
func TestRouterPage(t *testing.T) {
	for _, old := range []bool{false, true} {
		obs := scrapePages(t, Config{}, routerPage(10, old), routerPage(30, old))
		ep := onlyEndpoint(t, obs)
		if info := one(t, obs, telemetry.KindEndpoint, ep, "").Info; info.Engine != telemetry.EngineLLMD {
			t.Fatalf("engine %q, want llm-d", info.Engine)
		}
		h := one(t, obs, telemetry.KindHistogram, ep, telemetry.TTFT)
		if n := h.Buckets[len(h.Buckets)-1].Count; n != 40 || !near(h.Value, 2) {
			t.Errorf("old=%v: TTFT increment %v requests, %v s; want 40 (20 per target) and 2", old, n, h.Value)
		}
		if h := one(t, obs, telemetry.KindHistogram, ep, telemetry.TPOT); h.Buckets[len(h.Buckets)-1].Count != 40 {
			t.Errorf("old=%v: TPOT increment %v, want 40", old, h.Buckets[len(h.Buckets)-1].Count)
		}
		checkSample(t, obs, ep, telemetry.RequestRate, 40)
		checkErrorCounts(t, obs, ep, 10, 40)
	}
	// Only the old names: read as the fallback.
	only := func(n int) string {
		page := routerPage(n, true)
		return page[strings.Index(page, "# TYPE inference_objective_request_ttft_seconds"):]
	}
	obs := scrapePages(t, Config{}, only(10), only(30))
	ep := onlyEndpoint(t, obs)
	if h := one(t, obs, telemetry.KindHistogram, ep, telemetry.TTFT); h.Buckets[len(h.Buckets)-1].Count != 120 {
		t.Errorf("old names only: TTFT increment %v, want 120", h.Buckets[len(h.Buckets)-1].Count)
	}
	checkSample(t, obs, ep, telemetry.RequestRate, 140)
}

// vLLM's LoRA info gauge, as vLLM writes it (one series per change, valued
// the time of the change, no model label; the shape of the pages in
// llm-d-inference-sim's tests): the newest series counts, for the page's
// model; its lists are of distinct adapter names.
func TestLoRAInfo(t *testing.T) {
	page := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="base-8b"} 3.0
# TYPE vllm:lora_requests_info gauge
vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql-lora",waiting_lora_adapters=""} 1.7907e+09
vllm:lora_requests_info{max_lora="2",running_lora_adapters="sql-lora,chat-lora",waiting_lora_adapters="doc-lora"} 1.7907001e+09
vllm:lora_requests_info{max_lora="2",running_lora_adapters="",waiting_lora_adapters=""} 1.7906e+09
`
	obs := scrapePages(t, Config{}, page)
	ep := onlyEndpoint(t, obs)
	if !strings.HasSuffix(ep, "/base-8b") {
		t.Fatalf("endpoint %s, want the base model's", ep)
	}
	checkSample(t, obs, ep, telemetry.LoRARunning, 2)
	checkSample(t, obs, ep, telemetry.LoRAWaiting, 1)
}
