package scrape

import (
	"strings"
	"testing"

	"github.com/tokentop/tokentop/telemetry"
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
