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

// A TensorRT-LLM worker behind Dynamo, a real page (Dynamo's docs, two
// requests to Qwen3-0.6B): read as TensorRT-LLM by its trtllm_ names,
// one endpoint by model_name (Dynamo's dynamo_component_* families, with
// their model label and label-less uptime, are not read and add none);
// its time_per_output_token histogram takes one observation per request,
// the TPOT, and no TPOT is derived.
func TestDiagnosisDynamoTRTLLMWorkerCapture(t *testing.T) {
	raw := readFixture(t, "dynamo-trtllm-worker-qwen3-0.6b-metrics.txt")
	tg, obs := scrapeCapture(t, freshPage(raw), raw, nil)
	ep := tg.host() + "/Qwen/Qwen3-0.6B"
	if got := endpoints(obs); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v, want only %s", got, ep)
	}
	if info := one(t, obs, telemetry.KindEndpoint, ep, "").Info; info.Engine != telemetry.EngineTRTLLM {
		t.Fatalf("engine %q, want trtllm", info.Engine)
	}
	checkPhase(t, obs, raw, ep, telemetry.TTFT, "trtllm_time_to_first_token_seconds")
	checkPhase(t, obs, raw, ep, telemetry.TPOT, "trtllm_time_per_output_token_seconds")
	checkPhase(t, obs, raw, ep, telemetry.E2E, "trtllm_e2e_request_latency_seconds")
	checkPhase(t, obs, raw, ep, telemetry.QueueTime, "trtllm_request_queue_time_seconds")
	requests := pageSum(t, raw, "trtllm_request_success_total") // 2
	if tpot := one(t, obs, telemetry.KindHistogram, ep, telemetry.TPOT); tpot.Buckets[len(tpot.Buckets)-1].Count != requests {
		t.Errorf("TPOT observations %v, want one per request (%v)", tpot.Buckets[len(tpot.Buckets)-1].Count, requests)
	}
	checkSample(t, obs, ep, telemetry.RequestRate, requests)
	checkErrorCounts(t, obs, ep, 0, requests)
	for _, sig := range []telemetry.Signal{telemetry.ITL, telemetry.Running, telemetry.OutputTPS, telemetry.KVCache} {
		if got := find(obs, telemetry.KindSample, ep, sig); len(got) != 0 {
			t.Errorf("%s from a page without its family: %s", sig, dump(got))
		}
	}
}
