package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixtureSteps turns a capture into server writes, one event per write
// with a small delay, framing .payloads.jsonl lines as the API frames them.
// lineFramed restores the blank line after each line of an excerpt printed
// without them (the servers send one after every event).
func fixtureSteps(t *testing.T, path string, api API, delay time.Duration, lineFramed bool) []step {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	switch {
	case strings.HasSuffix(path, ".payloads.jsonl"):
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			switch api {
			case Anthropic, OpenAIResponses:
				// Typed events: the SSE event name repeats the payload type.
				var typ struct {
					Type string `json:"type"`
				}
				if err := json.Unmarshal([]byte(line), &typ); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				pieces = append(pieces, "event: "+typ.Type+"\ndata: "+line+"\n\n")
			default:
				pieces = append(pieces, "data: "+line+"\n\n")
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if api == OpenAIChat || api == OpenAICompletions {
			pieces = append(pieces, "data: [DONE]\n\n") // the payload files leave out the sentinel
		}
	case strings.HasSuffix(path, ".ndjson"):
		pieces = strings.SplitAfter(string(raw), "\n")
	case lineFramed:
		for line := range strings.Lines(string(raw)) {
			pieces = append(pieces, line+"\n")
		}
	default:
		pieces = strings.SplitAfter(string(raw), "\n\n")
	}
	steps := make([]step, 0, len(pieces))
	for _, p := range pieces {
		if p != "" {
			steps = append(steps, step{Wait: delay, Data: p})
		}
	}
	return steps
}

type fixtureCase struct {
	file     string
	api      API
	kind     ErrorKind // "" = success
	events   int
	n        int
	src      TokenSource
	perEvent []int  // nil = not checked
	text     string // expected concatenated text prefix ("" = not checked)
	suffix   string // expected concatenated text suffix ("" = not checked)
	prompt   int    // prompt tokens the stream reports (0 = not checked)
	warning  string // a warning that must be present
	// lineFramed: the excerpt prints its events one per line without the
	// blank lines between them; see TestFixtureExcerptsAsPrinted.
	lineFramed bool
}

// TestFixtures replays every capture through its parser. Expected counts
// were read off the files with jq/grep (see MANIFEST.md), not from this
// parser: events = token-bearing events, n = output tokens.
func TestFixtures(t *testing.T) {
	dir := fixtureDir(t)
	cases := []fixtureCase{
		{file: "anthropic_messages_basic_sdkfixture.sse.txt", api: Anthropic, events: 3, n: 6, src: TokensUsage,
			text: "Hello there!", warning: "not terminated"},
		{file: "anthropic_messages_sonnet45_text.payloads.jsonl", api: Anthropic, events: 6, n: 30, src: TokensUsage,
			text: "Hello! I'm doing well"},
		// Thinking then text: the 4 thinking_delta and 6 text_delta events
		// carry output text, the signature_delta does not; output_tokens
		// 373 of message_delta includes the 62 thinking tokens.
		{file: "anthropic_messages_sonnet5_thinking.payloads.jsonl", api: Anthropic, events: 10, n: 373, src: TokensUsage,
			prompt: 47,
			text:   "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n## Step 1",
			suffix: "**Verification:** \n- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓"},
		{file: "anthropic_messages_sonnet4_tool_use.sse.txt", api: Anthropic, events: 6, n: 65, src: TokensUsage,
			text: `I'll check the current weather in Paris for you.{"location": "Paris"}`},
		{file: "centml_llama33_70b_chat.sse.txt", api: OpenAIChat, events: 7, n: 7, src: TokensEvents,
			text: "**Deep Learning Overview**\n=========================\n\nDeep learning is a"},
		{file: "cohere_compat_commandr7b_chat.sse.txt", api: OpenAIChat, events: 19, n: 19, src: TokensUsage,
			perEvent: ones(19), text: "Deep learning is a subfield"},
		{file: "hyperbolic_llama32_3b_chat.sse.txt", api: OpenAIChat, events: 20, n: 21, src: TokensUsage,
			perEvent: append([]int{2}, ones(19)...)},
		{file: "llamacpp_completion_native_midstream_excerpt.sse.txt", api: LlamaCpp, kind: ErrTruncated,
			events: 3, n: 154, src: TokensEngine},
		{file: "llamacpp_v1chat_b6290_tail_excerpt.sse.txt", api: OpenAIChat, events: 1, n: 22, src: TokensUsage},
		{file: "nebius_llama31_8b_chat.sse.txt", api: OpenAIChat, events: 20, n: 20, src: TokensEvents},
		{file: "novita_llama31_8b_chat.sse.txt", api: OpenAIChat, events: 16, n: 20, src: TokensUsage,
			perEvent: append([]int{5}, ones(15)...), text: "Deep learning is a subfield of machine learning"},
		{file: "ollama_generate_cloud_deepseekv31_no_durations.ndjson", api: OllamaGenerate, events: 9, n: 11,
			src: TokensEngine, text: "Fluffy, hoppy, twitchy."},
		{file: "ollama_generate_dolphin3_8b_local.ndjson", api: OllamaGenerate, events: 5, n: 6, src: TokensEngine,
			text: "Fluffy white tail."},
		{file: "openai_chat_gpt41nano_300tok_obfuscation.payloads.jsonl", api: OpenAIChat, events: 300, n: 300,
			src: TokensUsage, perEvent: ones(300), text: "**Holiday"},
		{file: "openai_chat_gpt4o_json_content_usage.txt", api: OpenAIChat, events: 14, n: 14, src: TokensUsage, perEvent: ones(14)},
		{file: "openai_chat_gpt4o_logprobs.txt", api: OpenAIChat, events: 2, n: 2, src: TokensUsage},
		{file: "openai_chat_gpt4o_max_tokens_1_finish_length.txt", api: OpenAIChat, events: 1, n: 1, src: TokensUsage, text: `{"`},
		{file: "openai_chat_gpt4o_n3_multiple_choices.txt", api: OpenAIChat, events: 42, n: 42, src: TokensUsage},
		{file: "openai_chat_gpt4o_tool_calls.txt", api: OpenAIChat, events: 7, n: 16, src: TokensUsage,
			text: `{"city":"New York City"}`},
		{file: "openai_completions_gpt35instruct.payloads.jsonl", api: OpenAICompletions, events: 16, n: 16,
			src: TokensUsage, text: "The holiday"},
		{file: "openai_responses_error_insufficient_quota.payloads.jsonl", api: OpenAIResponses, kind: ErrStream},
		{file: "openai_responses_gpt52_text.payloads.jsonl", api: OpenAIResponses, events: 8, n: 12, src: TokensUsage,
			text: "`arm64` (Apple Silicon)."},
		// gpt-oss reasoning only (max_tokens 200, all reasoning): SGLang's
		// delta.reasoning_content, 4 reasoning chunks of the excerpt, then
		// a separate finish chunk and usage 200.
		{file: "sglang_gptoss120b_reasoning_content_excerpt.sse.txt", api: OpenAIChat, events: 4, n: 200, src: TokensUsage,
			prompt: 2677, text: "We need to IDs", suffix: "We need to IDs", lineFramed: true},
		{file: "tgi143_hfapi_zephyr_chat_noDONE.sse.txt", api: OpenAIChat, events: 20, n: 20, src: TokensEvents,
			text: "Deep learning", warning: "without its terminal event"},
		{file: "tgi301_hfinference_llama31_8b_chat.sse.txt", api: OpenAIChat, events: 34, n: 34, src: TokensEvents},
		{file: "tgi321_hfinference_llama31_8b_chat.sse.txt", api: OpenAIChat, events: 20, n: 20, src: TokensEvents},
		{file: "tgi_generate_stream_capture_ja.sse.txt", api: TGI, events: 20, n: 20, src: TokensEvents,
			perEvent: ones(20), text: "\n日本で一番高い山はなんですか?\nベストアンサー\n富士山です。"},
		{file: "triton_trtllm_ensemble_generate_stream_head_excerpt.sse.txt", api: Triton, events: 5, n: 5,
			src: TokensEvents, text: "**\nTo count to nine"},
		// vLLM's delta.reasoning: 4 reasoning chunks of the excerpt, the
		// last one also finishing (length), then usage 200.
		{file: "vllm_gptoss120b_reasoning_field_excerpt.sse.txt", api: OpenAIChat, events: 4, n: 200, src: TokensUsage,
			prompt: 2674, text: "We need toSTATE", suffix: "We need toSTATE", lineFramed: true},
	}
	// Every capture in the directory must have a case.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "MANIFEST.md" {
			continue
		}
		if !slices.ContainsFunc(cases, func(c fixtureCase) bool { return c.file == e.Name() }) {
			t.Errorf("capture %s has no test case", e.Name())
		}
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			const delay = 2 * time.Millisecond
			steps := fixtureSteps(t, filepath.Join(dir, c.file), c.api, delay, c.lineFramed)
			ct := "text/event-stream"
			if c.api == OllamaGenerate {
				ct = "application/x-ndjson"
			}
			srv := server(t, scripted(ct, steps))
			url := srv.URL
			if c.api == Triton {
				url += "/v2/models/ensemble/generate_stream"
			}
			p, err := New(Options{URL: url, API: c.api, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var text strings.Builder
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r := p.Do(ctx, func(pr Progress) { text.WriteString(pr.Fragment) })

			if c.kind != "" {
				if r.OK || r.ErrorKind != c.kind {
					t.Fatalf("got ok=%v kind=%q (%s), want failure %q", r.OK, r.ErrorKind, r.Err, c.kind)
				}
				if r.TTFT != 0 || r.E2E != 0 || r.ITL() != nil {
					t.Errorf("failed probe kept latencies: ttft %v e2e %v", r.TTFT, r.E2E)
				}
			} else if !r.OK {
				t.Fatalf("failed: %s: %s", r.ErrorKind, r.Err)
			}
			if r.Events != c.events || r.OutputTokens != c.n || (c.src != "" && r.TokensSource != c.src) {
				t.Errorf("events %d n %d source %q, want %d %d %q", r.Events, r.OutputTokens, r.TokensSource, c.events, c.n, c.src)
			}
			if c.perEvent != nil && !slices.Equal(r.TokensPerEvent, c.perEvent) {
				t.Errorf("tokens per event %v, want %v", r.TokensPerEvent, c.perEvent)
			}
			if c.perEvent == nil && c.src == TokensEvents && r.TokensPerEvent != nil {
				t.Errorf("tokens per event %v claimed for an estimated count", r.TokensPerEvent)
			}
			if c.text != "" && !strings.HasPrefix(text.String(), c.text) {
				t.Errorf("text %q, want prefix %q", text.String(), c.text)
			}
			if c.suffix != "" && !strings.HasSuffix(text.String(), c.suffix) {
				t.Errorf("text %q, want suffix %q", text.String(), c.suffix)
			}
			if c.prompt != 0 && r.PromptTokens != c.prompt {
				t.Errorf("prompt tokens %d, want %d", r.PromptTokens, c.prompt)
			}
			if c.warning != "" && !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, c.warning) }) {
				t.Errorf("warnings %q lack %q", r.Warnings, c.warning)
			}
			if !r.OK {
				return
			}
			// Timing sanity: each event was written ≥ delay after the one
			// before, and the approximations agree with the definitions.
			if len(r.ITL()) != r.Events-1 {
				t.Errorf("ITL has %d gaps for %d events", len(r.ITL()), r.Events)
			}
			if r.TTFT <= 0 || r.E2E < r.TTFT {
				t.Errorf("ttft %v e2e %v", r.TTFT, r.E2E)
			}
			// Events are dated by the read that brought them: a reader
			// late by more than the delay (a busy machine) gets the last
			// ones in one read, and a decode span of 0 has no TPOT (CI: 2
			// events, both in one read). Only then may it be undefined.
			offsets := r.EventOffsets
			oneRead := len(offsets) > 1 && offsets[len(offsets)-1] == offsets[0]
			if tpot, ok := r.TPOT(); ok != (r.OutputTokens > 1 && r.Events > 1 && !oneRead) {
				t.Errorf("TPOT defined=%v (%v) for n=%d events=%d, offsets %v", ok, tpot, r.OutputTokens, r.Events, offsets)
			} else if ok && tpot != (r.E2E-r.TTFT)/time.Duration(r.OutputTokens-1) {
				t.Errorf("TPOT %v ≠ (E2E−TTFT)/(n−1)", tpot)
			}
			if r.Approx() != (c.src == TokensEvents) {
				t.Errorf("Approx = %v for source %q", r.Approx(), r.TokensSource)
			}
		})
	}
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// TestFixtureServerTimings checks the engine figures kept next to ours.
func TestFixtureServerTimings(t *testing.T) {
	dir := fixtureDir(t)
	for _, c := range []struct {
		file string
		api  API
		want func(*Result) bool
	}{
		{"ollama_generate_dolphin3_8b_local.ndjson", OllamaGenerate, func(r *Result) bool {
			o := r.Ollama
			return o != nil && o.TotalDuration == 1926263700 && o.LoadDuration == 1667241100 &&
				o.PromptEvalCount == 30 && o.PromptEvalDuration == 123822500 && o.EvalCount == 6 &&
				o.EvalDuration == 133173800 && r.PromptTokens == 30
		}},
		{"ollama_generate_cloud_deepseekv31_no_durations.ndjson", OllamaGenerate, func(r *Result) bool {
			o := r.Ollama
			return o != nil && o.TotalDuration == 737855362 && o.LoadDuration == 0 && o.EvalDuration == 0 && o.DecodeTPS() == 0
		}},
		{"llamacpp_v1chat_b6290_tail_excerpt.sse.txt", OpenAIChat, func(r *Result) bool {
			l := r.LlamaCpp
			return l != nil && l.PromptN == 28 && l.PromptMS == 447.926 && l.PredictedN == 22 && l.PredictedMS == 1317.711 && r.PromptTokens == 28
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			srv := server(t, scripted("text/event-stream", fixtureSteps(t, filepath.Join(dir, c.file), c.api, 0, false)))
			r := probeOnce(t, Options{URL: srv.URL, API: c.api})
			if !r.OK || !c.want(r) {
				t.Errorf("ok=%v %s; ollama %+v llamacpp %+v prompt %d", r.OK, r.Err, r.Ollama, r.LlamaCpp, r.PromptTokens)
			}
		})
	}
}

// TestFixtureExcerptsAsPrinted replays the excerpts printed without blank
// lines byte for byte. Under the event-stream rules their data lines make
// one event whose data is several JSON values joined by newlines: the
// probe must reject it as an invalid event, not count it as one token.
func TestFixtureExcerptsAsPrinted(t *testing.T) {
	dir := fixtureDir(t)
	for _, file := range []string{
		"sglang_gptoss120b_reasoning_content_excerpt.sse.txt",
		"vllm_gptoss120b_reasoning_field_excerpt.sse.txt",
	} {
		t.Run(file, func(t *testing.T) {
			steps := fixtureSteps(t, filepath.Join(dir, file), OpenAIChat, 0, false)
			if len(steps) != 1 {
				t.Fatalf("%d writes, want the whole excerpt as one", len(steps))
			}
			srv := server(t, scripted("text/event-stream", steps))
			r := probeOnce(t, Options{URL: srv.URL, API: OpenAIChat})
			if r.OK || r.ErrorKind != ErrInvalidEvent || !strings.Contains(r.Err, "event 1:") || r.Events != 0 {
				t.Errorf("ok=%v kind %q events %d err %q; want an invalid event 1", r.OK, r.ErrorKind, r.Events, r.Err)
			}
		})
	}
}
