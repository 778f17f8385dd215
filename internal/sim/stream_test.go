package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// An idle engine answers with TTFT ≈ prefill time and TPOT ≈ step time,
// as seen by a real HTTP client.
func TestStreamTimingMatchesEngineModel(t *testing.T) {
	const step = 20 * time.Millisecond
	spec := stepModel("m", step, 4000) // 400-token prompt → 100 ms prefill
	s, ts := newTestServer(t, Config{Models: []ModelSpec{spec}})
	prompt := strings.Repeat("abcd", 396) // 396 tokens + 4 template tokens = 400
	for _, tc := range []struct {
		name, path, body string
		wantPrefill      time.Duration
	}{
		{"chat", "/v1/chat/completions",
			`{"model":"m","stream":true,"max_tokens":30,"ignore_eos":true,"messages":[{"role":"user","content":"` + prompt + `"}]}`,
			100 * time.Millisecond},
		{"completions", "/v1/completions",
			`{"model":"m","stream":true,"max_tokens":30,"ignore_eos":true,"prompt":"` + strings.Repeat("abcd", 200) + `"}`,
			50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			retry(t, func() error {
				r := streamRequest(t, context.Background(), ts.URL, tc.path, tc.body)
				if r.status != 200 || r.tokens != 30 || r.finish != "length" {
					t.Fatalf("status %d tokens %d finish %q err %s", r.status, r.tokens, r.finish, r.errorMsg)
				}
				if r.ttft < tc.wantPrefill || r.ttft > tc.wantPrefill+40*time.Millisecond {
					return fmt.Errorf("TTFT %v, want ≈ prefill %v", r.ttft, tc.wantPrefill)
				}
				if got := r.tpot(); !within(got, step, 3*time.Millisecond) {
					return fmt.Errorf("TPOT %v, want ≈ step %v", got, step)
				}
				return nil
			})
		})
	}
	if st := s.ScheduleErrors(); st.Count == 0 || st.P50 > 5*time.Millisecond {
		t.Errorf("schedule error %+v", st)
	}
}

// vLLM wire format: role chunk, content chunks, finish chunk, usage chunk
// with choices [], [DONE]; ids and objects as vLLM writes them.
func TestStreamWireFormat(t *testing.T) {
	_, ts := newTestServer(t, Config{Models: []ModelSpec{stepModel("m", 2*time.Millisecond, 1e6)}})
	r := streamRequest(t, context.Background(), ts.URL, "/v1/chat/completions",
		`{"model":"m","stream":true,"max_tokens":5,"ignore_eos":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if len(r.events) != 1+5+1+1 {
		t.Fatalf("events %d: %q", len(r.events), r.events)
	}
	var first map[string]any
	json.Unmarshal([]byte(r.events[0]), &first)
	if !strings.HasPrefix(first["id"].(string), "chatcmpl-") || first["object"] != "chat.completion.chunk" ||
		first["model"] != "m" || first["created"] == nil {
		t.Errorf("first chunk %v", first)
	}
	if !strings.Contains(r.events[0], `"delta":{"role":"assistant","content":""}`) {
		t.Errorf("no role-only first chunk: %s", r.events[0])
	}
	if !strings.Contains(r.events[5], `"finish_reason":"length"`) || !strings.Contains(r.events[4], `"finish_reason":null`) {
		t.Errorf("finish chunk: %s", r.events[5])
	}
	if !strings.Contains(r.events[6], `"choices":[]`) || r.usage["completion_tokens"] != 5 || r.usage["total_tokens"] != r.usage["prompt_tokens"]+5 {
		t.Errorf("usage chunk: %s", r.events[6])
	}
	if r.events[7] != "[DONE]" {
		t.Errorf("last event %q", r.events[7])
	}
	// Without include_usage there is no usage chunk.
	r = streamRequest(t, context.Background(), ts.URL, "/v1/completions",
		`{"model":"m","stream":true,"max_tokens":3,"ignore_eos":true,"prompt":"hello"}`)
	if len(r.events) != 4 || r.usage != nil || !strings.Contains(r.events[0], `"object":"text_completion"`) ||
		!strings.HasPrefix(r.events[0], `{"id":"cmpl-`) {
		t.Errorf("completions stream %q", r.events)
	}
}

// Natural stops end with an empty EOS delta and finish_reason "stop";
// identical prompts give identical answers for a seed.
func TestStopAndDeterminism(t *testing.T) {
	spec := stepModel("m", time.Millisecond, 1e6)
	spec.MeanOutputTokens = 8
	_, ts := newTestServer(t, Config{Seed: 7, Models: []ModelSpec{spec}})
	get := func(prompt string) (string, string) {
		resp, b := postJSON(t, ts.URL, "/v1/chat/completions",
			`{"model":"m","max_tokens":500,"messages":[{"role":"user","content":"`+prompt+`"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		var out struct {
			Object  string
			Choices []struct {
				Message      struct{ Content string }
				FinishReason string `json:"finish_reason"`
			}
		}
		json.Unmarshal(b, &out)
		if out.Object != "chat.completion" {
			t.Errorf("object %q", out.Object)
		}
		return out.Choices[0].Message.Content, out.Choices[0].FinishReason
	}
	a, fa := get("tell me a story")
	b, _ := get("tell me a story")
	c, _ := get("something else entirely")
	if fa != "stop" || a == "" || a != b || a == c {
		t.Errorf("finish %q, answers %q / %q / %q", fa, a, b, c)
	}
	r := streamRequest(t, context.Background(), ts.URL, "/v1/chat/completions",
		`{"model":"m","stream":true,"max_tokens":500,"messages":[{"role":"user","content":"tell me a story"}]}`)
	last := r.events[len(r.events)-2]
	if r.finish != "stop" || !strings.Contains(last, `"delta":{"content":""}`) {
		t.Errorf("stop chunk %s", last)
	}
	var text strings.Builder
	for _, e := range r.events[1 : len(r.events)-1] {
		var c struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		json.Unmarshal([]byte(e), &c)
		text.WriteString(c.Choices[0].Delta.Content)
	}
	if text.String() != a {
		t.Errorf("streamed %q != non-streamed %q", text.String(), a)
	}
}

// Speculative decoding: the tokens one step accepts go out as one chunk
// with a multi-token delta, as vLLM and SGLang send them (never as events
// microseconds apart): one content event per engine step (the first
// token's, then one per verification step), the text the same as the
// non-streamed answer's, and the usage count the tokens'.
func TestSpeculativeStepIsOneChunk(t *testing.T) {
	spec := stepModel("m", 2*time.Millisecond, 1e6)
	spec.SpecTokens, spec.SpecAcceptRate = 3, 0.7
	_, ts := newTestServer(t, Config{Seed: 3, Models: []ModelSpec{spec}})
	const maxTokens = 60
	body := `"model":"m","max_tokens":60,"ignore_eos":true,"messages":[{"role":"user","content":"a long story"}]`
	resp, raw := postJSON(t, ts.URL, "/v1/chat/completions", `{`+body+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	var whole struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal(raw, &whole); err != nil || len(whole.Choices) != 1 {
		t.Fatalf("answer %s: %v", raw, err)
	}
	before := metricValue(t, scrape(t, ts.URL), "vllm:spec_decode_num_drafts_total", map[string]string{"model_name": "m"}).GetCounter().GetValue()
	r := streamRequest(t, context.Background(), ts.URL, "/v1/chat/completions",
		`{"stream":true,"stream_options":{"include_usage":true},`+body+`}`)
	drafts := metricValue(t, scrape(t, ts.URL), "vllm:spec_decode_num_drafts_total", map[string]string{"model_name": "m"}).GetCounter().GetValue() - before
	if r.status != 200 || r.finish != "length" || r.usage["completion_tokens"] != maxTokens {
		t.Fatalf("status %d finish %q usage %v err %s", r.status, r.finish, r.usage, r.errorMsg)
	}
	var text strings.Builder
	multi := 0
	for _, e := range r.events[1 : len(r.events)-2] { // role … usage, [DONE]
		var c struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("chunk %s: %v", e, err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		if strings.Count(strings.TrimSpace(c.Choices[0].Delta.Content), " ") > 0 {
			multi++
		}
	}
	if r.tokens != 1+int(drafts) || r.tokens >= maxTokens {
		t.Errorf("%d content events for %d tokens, want one per step: 1 + %v verification steps", r.tokens, maxTokens, drafts)
	}
	if multi == 0 {
		t.Errorf("no multi-token delta in %q", r.events)
	}
	if text.String() != whole.Choices[0].Message.Content {
		t.Errorf("streamed %q != non-streamed %q", text.String(), whole.Choices[0].Message.Content)
	}
}

// vLLM's continuous_usage_stats: every chunk carries the usage so far, so
// a client can tell the tokens each event brought (more than one per
// speculative step); the last chunk's count is the answer's.
func TestContinuousUsageStats(t *testing.T) {
	spec := stepModel("m", 2*time.Millisecond, 1e6)
	spec.SpecTokens, spec.SpecAcceptRate = 3, 0.7
	_, ts := newTestServer(t, Config{Seed: 3, Models: []ModelSpec{spec}})
	const maxTokens = 40
	r := streamRequest(t, context.Background(), ts.URL, "/v1/chat/completions",
		`{"model":"m","stream":true,"max_tokens":40,"ignore_eos":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"messages":[{"role":"user","content":"hi"}]}`)
	if r.status != 200 || r.finish != "length" {
		t.Fatalf("status %d finish %q err %s", r.status, r.finish, r.errorMsg)
	}
	prev, multi := 0, 0
	for _, e := range r.events[:len(r.events)-1] { // all but [DONE]
		var c struct {
			Usage *struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
				Total      int `json:"total_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e), &c); err != nil || c.Usage == nil {
			t.Fatalf("chunk without usage %s: %v", e, err)
		}
		u := c.Usage
		if u.Completion < prev || u.Total != u.Prompt+u.Completion {
			t.Fatalf("usage %+v after %d in %s", *u, prev, e)
		}
		if u.Completion-prev > 1 {
			multi++
		}
		prev = u.Completion
	}
	if prev != maxTokens || multi == 0 {
		t.Errorf("last usage %d (want %d), %d multi-token chunks", prev, maxTokens, multi)
	}
}
