package scrape

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// scrapeCapture serves fresh then raw, one second apart, from a target
// with the extra JSON paths given, and returns the second scrape's
// observations: the capture's own totals as one interval's increments.
func scrapeCapture(t *testing.T, fresh, raw string, extra map[string]string) (*target, []telemetry.Observation) {
	t.Helper()
	tg := newTarget(t, fresh)
	for path, body := range extra {
		tg.extra[path] = body
	}
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatalf("scrape 1: %v", err)
	}
	clk.Advance(time.Second)
	tg.set(raw)
	c.Take()
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatalf("scrape 2: %v", err)
	}
	return tg, c.Take()
}

// NVIDIA NIM's real page: unprefixed vLLM V0 names, NIM's own request
// counters, served on /v1/metrics in production (here on /metrics).
func TestFixtureNIM(t *testing.T) {
	raw := readFixture(t, "nim-llama3.1-8b-metrics.txt")
	if strings.HasSuffix(raw, "\n") {
		t.Fatal("the capture is stored without its final newline; this test expects that")
	}
	raw += "\n"
	tg := newTarget(t, raw)
	first, second := scrapeTwice(t, tg, Config{})
	ep := tg.host() + "/meta/llama-3.1-8b-instruct"
	if got := endpoints(first); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v", got)
	}
	if info := one(t, first, telemetry.KindEndpoint, ep, "").Info; info.Engine != telemetry.EngineNIM {
		t.Fatalf("engine %q, want NIM (num_request_max, request_finish_total)", info.Engine)
	}
	checkGauge(t, first, ep, telemetry.Running, 1)
	checkGauge(t, first, ep, telemetry.Waiting, 0)
	checkGauge(t, first, ep, telemetry.KVCache, 0.0002848191398461977)
	zeroHistogram(t, second, ep, telemetry.TTFT, 17) // 16 bounds + Inf
	zeroHistogram(t, second, ep, telemetry.ITL, 14)  // time_per_output_token: 13 bounds + Inf
	zeroHistogram(t, second, ep, telemetry.E2E, 11)
	if n := len(find(second, telemetry.KindHistogram, ep, telemetry.TPOT)); n != 0 {
		t.Fatal("a TPOT histogram from NIM's per-token histogram")
	}
	checkErrorCounts(t, second, ep, 0, 0)
}

// The NIM capture's totals as one second's increments: the per-token mean,
// the rates and the error rate from request_failure/success_total.
func TestDiagnosisNIMCapture(t *testing.T) {
	raw := readFixture(t, "nim-llama3.1-8b-metrics.txt") + "\n"
	tg, obs := scrapeCapture(t, freshPage(raw), raw, nil)
	ep := tg.host() + "/meta/llama-3.1-8b-instruct"
	o := one(t, obs, telemetry.KindHistogram, ep, telemetry.ITL)
	if count := o.Buckets[len(o.Buckets)-1].Count; count != 169 || !near(o.Value, 1.856855869293213) {
		t.Errorf("ITL increment: %v observations, sum %v; want 169 and 1.856855869293213", count, o.Value)
	}
	checkSample(t, obs, ep, telemetry.OutputTPS, pageSum(t, raw, "generation_tokens_total")) // 174
	checkSample(t, obs, ep, telemetry.PromptTPS, pageSum(t, raw, "prompt_tokens_total"))     // 109
	checkSample(t, obs, ep, telemetry.RequestRate, pageSum(t, raw, "request_finish_total"))  // 5
	checkErrorCounts(t, obs, ep, 0, pageSum(t, raw, "request_success_total"))                // 0 of 5
	checkPhase(t, obs, raw, ep, telemetry.TTFT, "time_to_first_token_seconds")
	if n := len(find(obs, telemetry.KindHistogram, ep, telemetry.QueueTime)); n != 0 {
		t.Error("queue time from a page without a queue histogram")
	}
}

// llama.cpp's page (here ik_llama.cpp's, with mainline's 2025 families):
// no labels, so the model comes from /v1/models; ITL is decode seconds per
// predicted token over the interval.
func TestDiagnosisLlamaCppCapture(t *testing.T) {
	raw := readFixture(t, "ik-llamacpp-server-metrics.txt")
	models := map[string]string{"/v1/models": `{"object":"list","data":[{"id":"smollm2-Q4_K_M","object":"model"}]}`}
	tg, obs := scrapeCapture(t, freshPage(raw), raw, models)
	ep := tg.host() + "/smollm2-Q4_K_M"
	if got := endpoints(obs); len(got) != 1 || got[0] != ep {
		t.Fatalf("endpoints %v", got)
	}
	itl := one(t, obs, telemetry.KindSample, ep, telemetry.ITL)
	want := pageSum(t, raw, "llamacpp:tokens_predicted_seconds_total") / pageSum(t, raw, "llamacpp:tokens_predicted_total")
	if !near(itl.Value, want) {
		t.Errorf("ITL %v s, want %v (3544.27 s / 3469 tokens)", itl.Value, want)
	}
	checkSample(t, obs, ep, telemetry.OutputTPS, 3469)
	checkSample(t, obs, ep, telemetry.PromptTPS, 6886)
	checkGauge(t, obs, ep, telemetry.KVCache, 0.491063)
	checkGauge(t, obs, ep, telemetry.Running, 0)
	checkGauge(t, obs, ep, telemetry.Waiting, 0)
	if n := len(find(obs, telemetry.KindSample, ep, telemetry.SpecAccept)); n != 0 {
		t.Error("spec-decode acceptance from a page without spec-decode counters")
	}
}

// The finished_reason values that count as failures are the engines' own:
// LMDeploy writes str(ResponseType.X) for every ResponseType (all series
// exist from the start, at 0), TensorRT-LLM its CompletionOutput reasons.
// The pages are generated in the engines' shape (no capture of either
// exists); 3 normal finishes and 1 failure between the scrapes each.
func TestFinishReasonFailures(t *testing.T) {
	for _, tc := range []struct {
		engine, family, model string
		normal, failed        string
		others                []string
	}{
		{"lmdeploy", "lmdeploy:request_success_total", `engine="0",model_name="m"`, "ResponseType.FINISH", "ResponseType.CANCEL",
			[]string{"ResponseType.SUCCESS", "ResponseType.INTERNAL_ENGINE_ERROR", "ResponseType.INPUT_LENGTH_ERROR"}},
		{"trtllm", "trtllm_request_success_total", `engine_type="trtllm",model_name="m"`, "stop", "cancelled",
			[]string{"length", "timeout"}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			page := func(normal, failed float64) string {
				series := map[string]float64{
					tc.model + `,finished_reason="` + tc.normal + `"`: normal,
					tc.model + `,finished_reason="` + tc.failed + `"`: failed,
				}
				for _, o := range tc.others {
					series[tc.model+`,finished_reason="`+o+`"`] = 0
				}
				return gaugeText(tc.family, "counter", series)
			}
			_, obs := scrapeCapture(t, page(10, 0), page(13, 1), nil)
			ep := onlyEndpoint(t, obs)
			checkErrorCounts(t, obs, ep, 1, 4)
			checkSample(t, obs, ep, telemetry.RequestRate, 4)
		})
	}
}
