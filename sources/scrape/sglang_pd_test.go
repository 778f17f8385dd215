package scrape

import (
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// sglangPDPage is an SGLang decode worker's page in P/D mode, table-
// generated from collector.py: every P/D queue gauge is registered (the
// prefill ones stay 0 on a decode worker), the labels as SGLang writes
// them (engine_type is its disaggregation mode). latency is the
// kv_transfer_latency_ms family: a histogram, or the older versions'
// gauge of the last transfer.
func sglangPDPage(transferQueue string, latency string) string {
	return `# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="decode",model_name="m",pp_rank="0",tp_rank="0"} 1.0
# TYPE sglang:num_prefill_prealloc_queue_reqs gauge
sglang:num_prefill_prealloc_queue_reqs{engine_type="decode",model_name="m",pp_rank="0",tp_rank="0"} 0.0
# TYPE sglang:num_prefill_inflight_queue_reqs gauge
sglang:num_prefill_inflight_queue_reqs{engine_type="decode",model_name="m",pp_rank="0",tp_rank="0"} 0.0
# TYPE sglang:num_decode_prealloc_queue_reqs gauge
sglang:num_decode_prealloc_queue_reqs{engine_type="decode",model_name="m",pp_rank="0",tp_rank="0"} 2.0
# TYPE sglang:num_decode_transfer_queue_reqs gauge
sglang:num_decode_transfer_queue_reqs{engine_type="decode",model_name="m",pp_rank="0",tp_rank="0"} ` + transferQueue + `
` + latency
}

// A decode worker's requests whose KV is in transfer are its deferred
// ones (the prealloc queue, waiting for memory, is not); the queue's own
// waiting gauge stays the waiting figure.
func TestSGLangDecodeTransferQueue(t *testing.T) {
	obs := scrapePages(t, Config{}, sglangPDPage("3.0", ""))
	ep := onlyEndpoint(t, obs)
	checkGauge(t, obs, ep, telemetry.WaitingDeferred, 3)
	checkGauge(t, obs, ep, telemetry.Waiting, 1)
}

// Older SGLang wrote kv_transfer_latency_ms as a gauge of the last
// transfer: one transfer is no distribution, so it is not read as the
// histogram the table names (no KV transfer time, no failure), while the
// current histogram is.
func TestSGLangTransferLatencyGaugeNotAHistogram(t *testing.T) {
	gauge := "# TYPE sglang:kv_transfer_latency_ms gauge\n" +
		`sglang:kv_transfer_latency_ms{engine_type="prefill",model_name="m",pp_rank="0",tp_rank="0"} 12.5` + "\n"
	obs := scrapePages(t, Config{}, sglangPDPage("0.0", gauge), sglangPDPage("0.0", gauge))
	ep := onlyEndpoint(t, obs)
	for _, kind := range []telemetry.Kind{telemetry.KindHistogram, telemetry.KindSample, telemetry.KindFailure} {
		if got := find(obs, kind, ep, telemetry.KVTransferTime); len(got) != 0 {
			t.Errorf("a gauge read as the KV transfer time: %s", dump(got))
		}
	}
	if st := status(t, obs); len(st.Warnings) != 0 {
		t.Errorf("warnings %v", st.Warnings)
	}
}

// An SGLang worker names its role in its engine_type label: a decode
// worker's endpoint is labelled decode, a configured role wins, and a
// unified (not disaggregated) worker has none.
func TestSGLangRoleFromPage(t *testing.T) {
	roleOf := func(cfg Config, page string) string {
		t.Helper()
		obs := scrapePages(t, cfg, page)
		return one(t, obs, telemetry.KindEndpoint, onlyEndpoint(t, obs), "").Info.Labels[telemetry.LabelRole]
	}
	decode := sglangPDPage("0.0", "")
	if got := roleOf(Config{}, decode); got != telemetry.RoleDecode {
		t.Errorf("role %q, want decode from engine_type", got)
	}
	if got := roleOf(Config{Role: telemetry.RolePrefill}, decode); got != telemetry.RolePrefill {
		t.Errorf("role %q, want the configured prefill", got)
	}
	if got := roleOf(Config{}, strings.ReplaceAll(decode, `engine_type="decode"`, `engine_type="unified"`)); got != "" {
		t.Errorf("role %q for a unified worker, want none", got)
	}
}
