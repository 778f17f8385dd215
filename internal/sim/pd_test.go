package sim

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// pdTest starts a P/D deployment of a jitter-free model without load:
// each request is the test's own, sent through the router.
func pdTest(t *testing.T, decode int, sc Scenario) *PD {
	t.Helper()
	p, err := NewPD(PDConfig{Model: stepModel("pd-model", 10*time.Millisecond, 20000), Prefill: 1, Decode: decode,
		KVBandwidth: 1e8, Scenario: sc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// pageOf renders a handler's /metrics.
func pageOf(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return parseMetrics(t, rec.Body.Bytes())
}

// histSum is a page's histogram count and sum, summed over its series.
func histSum(fams map[string]*dto.MetricFamily, name string) (count uint64, sum float64) {
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			count += m.GetHistogram().GetSampleCount()
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return count, sum
}

// pdSend sends n requests of 1000 prompt tokens and 8 answer tokens
// through the router, one after another.
func pdSend(t *testing.T, p *PD, n int) {
	t.Helper()
	for range n {
		if failed := p.Router().send(context.Background(), Request{PromptTokens: 1000, MaxTokens: 8, IgnoreEOS: true}); failed {
			t.Fatal("a request through the router failed")
		}
	}
}

// The prefill worker computes every prompt, the decode workers receive
// them by KV transfer and decode, and the router sees the whole: its
// TTFT holds the prefill worker's TTFT, the transfer and the decode
// worker's wait for its first step, as the pages count them.
func TestPDRequestsThroughRouter(t *testing.T) {
	p := pdTest(t, 2, Scenario{})
	pdSend(t, p, 6)
	pre := pageOf(t, p.Prefill()[0].Handler())
	pn, psum := histSum(pre, "vllm:time_to_first_token_seconds")
	var dn, dsum, xn, xsum, external float64
	for _, d := range p.Decode() {
		page := pageOf(t, d.Handler())
		n, s := histSum(page, "vllm:time_to_first_token_seconds")
		dn, dsum = dn+float64(n), dsum+s
		n, s = histSum(page, "vllm:nixl_xfer_time_seconds")
		xn, xsum = xn+float64(n), xsum+s
		external += metricValue(t, page, "vllm:prompt_tokens_by_source_total", map[string]string{"source": "external_kv_transfer"}).GetCounter().GetValue()
	}
	if pn != 6 || dn != 6 || xn != 6 {
		t.Fatalf("prefill TTFTs %d, decode TTFTs %v, transfers %v; want 6 each", pn, dn, xn)
	}
	// 2 ms + 1000 tokens × 1024 B / 100 MB/s each.
	if want := 6 * (0.002 + 1000*1024/1e8); math.Abs(xsum-want) > 1e-9 {
		t.Errorf("transfer time %v s, want %v", xsum, want)
	}
	if external != 6000 {
		t.Errorf("prompt tokens by KV transfer %v, want 6000", external)
	}
	if dsum < xsum {
		t.Errorf("decode TTFT %v s under the transfers' %v s it waited for", dsum, xsum)
	}
	rt := pageOf(t, p.Router().Handler())
	rn, rsum := histSum(rt, "llm_d_epp_request_ttft_seconds")
	if rn != 6 || rsum < psum+dsum {
		t.Errorf("router TTFT %d requests, %v s; want 6 and at least prefill %v + decode %v s", rn, rsum, psum, dsum)
	}
	if on, osum := histSum(rt, "inference_objective_request_ttft_seconds"); on != rn || osum != rsum {
		t.Errorf("old TTFT name %d, %v; want the new one's %d, %v", on, osum, rn, rsum)
	}
	if n := metricValue(t, rt, "llm_d_epp_request_total", nil).GetCounter().GetValue(); n != 6 {
		t.Errorf("router requests %v, want 6", n)
	}
}

// A kv_transfer_slow event makes every transfer factor× longer.
func TestPDKVTransferSlow(t *testing.T) {
	p := pdTest(t, 1, Scenario{Events: []Event{{Kind: EventKVSlow, Factor: 3}}})
	pdSend(t, p, 4)
	_, xsum := histSum(pageOf(t, p.Decode()[0].Handler()), "vllm:nixl_xfer_time_seconds")
	if want := 4 * 3 * (0.002 + 1000*1024/1e8); math.Abs(xsum-want) > 1e-9 {
		t.Errorf("transfer time %v s, want %v", xsum, want)
	}
}

// A closed decode worker leaves the pool: the router's ready endpoints
// drop and its requests go to the other worker.
func TestPDDecodeWorkerGone(t *testing.T) {
	p := pdTest(t, 2, Scenario{})
	ready := func() float64 {
		return metricValue(t, pageOf(t, p.Router().Handler()), "llm_d_epp_ready_endpoints", nil).GetGauge().GetValue()
	}
	if n := ready(); n != 3 {
		t.Fatalf("ready endpoints %v, want 3", n)
	}
	p.Decode()[0].Close()
	if n := ready(); n != 2 {
		t.Errorf("ready endpoints %v after a decode worker closed, want 2", n)
	}
	pdSend(t, p, 3)
	if n, _ := histSum(pageOf(t, p.Decode()[1].Handler()), "vllm:nixl_xfer_time_seconds"); n != 3 {
		t.Errorf("the remaining decode worker took %d transfers, want 3", n)
	}
}
