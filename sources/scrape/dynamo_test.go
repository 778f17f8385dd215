package scrape

import (
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// NVIDIA Dynamo's frontend, a real page (Dynamo's docs, one unary chat
// request to Qwen3-0.6B): read as the frontend's own engine, by its model
// label, with what the gateway saw of the request (TTFT, ITL, duration,
// tokens, requests) as one interval's increments. Its model_* gauges name
// the model in another case ("Qwen/Qwen3-0.6B") and are not read, so they
// add no second endpoint.
func TestDiagnosisDynamoFrontendCapture(t *testing.T) {
	raw := readFixture(t, "dynamo-frontend-qwen3-0.6b-metrics.txt")
	tg, obs := scrapeCapture(t, freshPage(raw), raw, nil)
	ep := tg.host() + "/qwen/qwen3-0.6b"
	if got := endpoints(obs); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v, want only %s", got, ep)
	}
	if info := one(t, obs, telemetry.KindEndpoint, ep, "").Info; info.Engine != telemetry.EngineDynamo {
		t.Fatalf("engine %q, want dynamo", info.Engine)
	}
	checkPhase(t, obs, raw, ep, telemetry.TTFT, "dynamo_frontend_time_to_first_token_seconds")
	checkPhase(t, obs, raw, ep, telemetry.ITL, "dynamo_frontend_inter_token_latency_seconds")
	checkPhase(t, obs, raw, ep, telemetry.E2E, "dynamo_frontend_request_duration_seconds")
	// One observation per token after the first: 299 gaps of 300 tokens.
	if itl := one(t, obs, telemetry.KindHistogram, ep, telemetry.ITL); itl.Buckets[len(itl.Buckets)-1].Count != pageSum(t, raw, "dynamo_frontend_output_tokens_total")-1 {
		t.Errorf("ITL observations %v, want output tokens − 1", itl.Buckets[len(itl.Buckets)-1].Count)
	}
	checkSample(t, obs, ep, telemetry.OutputTPS, pageSum(t, raw, "dynamo_frontend_output_tokens_total"))       // 300
	checkSample(t, obs, ep, telemetry.PromptTPS, pageSum(t, raw, "dynamo_frontend_input_sequence_tokens_sum")) // 33
	checkSample(t, obs, ep, telemetry.RequestRate, pageSum(t, raw, "dynamo_frontend_requests_total"))          // 1
	checkErrorCounts(t, obs, ep, 0, 1)
	checkGauge(t, obs, ep, telemetry.Running, 0)
	checkGauge(t, obs, ep, telemetry.Waiting, 0)

	// The same request failed: status="error" counts as a failure.
	failed := strings.Replace(raw, `status="success"} 1`, `status="error"} 1`, 1)
	if failed == raw {
		t.Fatal("the capture's request counter line was not found")
	}
	tg, obs = scrapeCapture(t, freshPage(failed), failed, nil)
	checkErrorCounts(t, obs, tg.host()+"/qwen/qwen3-0.6b", 1, 1)
}
