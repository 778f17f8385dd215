package probe

import (
	"path/filepath"
	"testing"
	"time"
)

// phaseCase is what a capture says about its phases, read off the file
// (see MANIFEST.md): which events are reasoning, answer and tool calls,
// and the counts the server reports.
type phaseCase struct {
	file       string
	api        API
	lineFramed bool
	firstAns   int // event index of the first answer token; −1: none
	firstTool  int // −1: none
	split      bool
	reasoning  int
	answer     int
	src        TokenSource
	// Phase runs as event indices [first, last]; first −1: no phase TPOT.
	rFirst, rLast int
	aFirst, aLast int
}

// TestFixturePhases replays the captures with reasoning or tool calls and
// checks TTFA, the time to the first tool call, the phase token counts and
// each phase's TPOT against the event arrival times.
func TestFixturePhases(t *testing.T) {
	dir := fixtureDir(t)
	for _, c := range []phaseCase{
		// 4 thinking_delta, then 6 text_delta; message_delta says
		// output_tokens 373 with output_tokens_details.thinking_tokens 62.
		{file: "anthropic_messages_sonnet5_thinking.payloads.jsonl", api: Anthropic, firstAns: 4, firstTool: -1,
			split: true, reasoning: 62, answer: 311, src: TokensUsage, rFirst: 0, rLast: 3, aFirst: 4, aLast: 9},
		// SGLang: 4 reasoning_content chunks, usage.reasoning_tokens 200
		// of completion_tokens 200: no answer at all.
		{file: "sglang_gptoss120b_reasoning_content_excerpt.sse.txt", api: OpenAIChat, lineFramed: true,
			firstAns: -1, firstTool: -1, split: true, reasoning: 200, answer: 0, src: TokensUsage,
			rFirst: 0, rLast: 3, aFirst: -1},
		// vLLM: 4 delta.reasoning chunks, no reasoning count, but every
		// event is reasoning: all 200 tokens are.
		{file: "vllm_gptoss120b_reasoning_field_excerpt.sse.txt", api: OpenAIChat, lineFramed: true,
			firstAns: -1, firstTool: -1, split: true, reasoning: 200, answer: 0, src: TokensUsage,
			rFirst: 0, rLast: 3, aFirst: -1},
		// Text ("I'll check…" in 2 deltas), then tool_use with 4 non-empty
		// input_json_delta: the answer starts at event 0, the tool at 2.
		{file: "anthropic_messages_sonnet4_tool_use.sse.txt", api: Anthropic, firstAns: 0, firstTool: 2,
			answer: 65, src: TokensUsage, rFirst: -1, aFirst: 0, aLast: 5},
		// Only tool-call arguments (7 fragments, usage 16, and
		// completion_tokens_details.reasoning_tokens 0: a count, so split).
		{file: "openai_chat_gpt4o_tool_calls.txt", api: OpenAIChat, firstAns: 0, firstTool: 0,
			split: true, answer: 16, src: TokensUsage, rFirst: -1, aFirst: 0, aLast: 6},
		// No reasoning (reasoning_tokens 0): one phase, TTFA = TTFT.
		{file: "openai_chat_gpt4o_json_content_usage.txt", api: OpenAIChat, firstAns: 0, firstTool: -1,
			split: true, answer: 14, src: TokensUsage, rFirst: -1, aFirst: 0, aLast: 13},
		// No reasoning shown nor counted: not split, the answer is n.
		{file: "nebius_llama31_8b_chat.sse.txt", api: OpenAIChat, firstAns: 0, firstTool: -1,
			answer: 20, src: TokensEvents, rFirst: -1, aFirst: 0, aLast: 19},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			steps := fixtureSteps(t, filepath.Join(dir, c.file), c.api, 2*time.Millisecond, c.lineFramed)
			srv := server(t, scripted("text/event-stream", steps))
			r := probeOnce(t, Options{URL: srv.URL, API: c.api})
			if !r.OK {
				t.Fatalf("failed: %s: %s", r.ErrorKind, r.Err)
			}
			ph := r.Phases()
			at := func(i int) time.Duration { return r.EventOffsets[i] }
			if ph.HasAnswer != (c.firstAns >= 0) || (c.firstAns >= 0 && ph.TTFA != at(c.firstAns)) {
				t.Errorf("TTFA %v (defined %v), want event %d", ph.TTFA, ph.HasAnswer, c.firstAns)
			}
			if c.firstAns == 0 && ph.TTFA != r.TTFT {
				t.Errorf("TTFA %v ≠ TTFT %v though the first event is an answer", ph.TTFA, r.TTFT)
			}
			if ph.HasTool != (c.firstTool >= 0) || (c.firstTool >= 0 && ph.FirstTool != at(c.firstTool)) {
				t.Errorf("first tool call %v (defined %v), want event %d", ph.FirstTool, ph.HasTool, c.firstTool)
			}
			if ph.Split != c.split || ph.Reasoning != c.reasoning || ph.Answer != c.answer || ph.TokensSource != c.src {
				t.Errorf("split %v reasoning %d answer %d source %q, want %v %d %d %q",
					ph.Split, ph.Reasoning, ph.Answer, ph.TokensSource, c.split, c.reasoning, c.answer, c.src)
			}
			if c.rFirst < 0 {
				if ph.HasReasoningTPOT {
					t.Errorf("reasoning TPOT %v without a reasoning phase", ph.ReasoningTPOT)
				}
			} else if want := (at(c.rLast) - at(c.rFirst)) / time.Duration(c.reasoning-1); !ph.HasReasoningTPOT || ph.ReasoningTPOT != want {
				t.Errorf("reasoning TPOT %v (defined %v), want %v", ph.ReasoningTPOT, ph.HasReasoningTPOT, want)
			}
			if c.aFirst < 0 {
				if ph.HasAnswerTPOT {
					t.Errorf("answer TPOT %v without an answer", ph.AnswerTPOT)
				}
			} else if want := (at(c.aLast) - at(c.aFirst)) / time.Duration(c.answer-1); !ph.HasAnswerTPOT || ph.AnswerTPOT != want {
				t.Errorf("answer TPOT %v (defined %v), want %v", ph.AnswerTPOT, ph.HasAnswerTPOT, want)
			}
			if c.split && c.rFirst >= 0 && c.aFirst >= 0 && !(ph.TTFA > r.TTFT) {
				t.Errorf("TTFA %v not after TTFT %v though reasoning came first", ph.TTFA, r.TTFT)
			}
		})
	}
}

// TestParserParts: each protocol says which part an event carries and
// where the server counts reasoning tokens.
func TestParserParts(t *testing.T) {
	for _, c := range []struct {
		name      string
		parser    Parser
		event     string
		data      string
		parts     Part
		reasoning int // −1: not reported
	}{
		{"responses reasoning", &responsesParser{}, "response.reasoning_text.delta",
			`{"type":"response.reasoning_text.delta","delta":"hm"}`, PartReasoning, -1},
		{"responses summary", &responsesParser{}, "", `{"type":"response.reasoning_summary_text.delta","delta":"hm"}`, PartReasoning, -1},
		{"responses text", &responsesParser{}, "", `{"type":"response.output_text.delta","delta":"Hi"}`, PartAnswer, -1},
		{"responses tool", &responsesParser{}, "", `{"type":"response.function_call_arguments.delta","delta":"{"}`, PartTool, -1},
		{"responses usage", &responsesParser{}, "", `{"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":40,"output_tokens_details":{"reasoning_tokens":32}}}}`, 0, 32},
		{"ollama thinking", &ollamaParser{}, "", `{"model":"m","message":{"role":"assistant","content":"","thinking":"Let me"},"done":false}`, PartReasoning, -1},
		{"ollama generate thinking", &ollamaParser{}, "", `{"model":"m","response":"","thinking":"Hmm","done":false}`, PartReasoning, -1},
		{"ollama content", &ollamaParser{}, "", `{"model":"m","message":{"role":"assistant","content":"Hi"},"done":false}`, PartAnswer, -1},
		{"ollama tool", &ollamaParser{}, "", `{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"city":"Paris"}}}]},"done":false}`, PartTool, -1},
		{"chat reasoning and content", &openAIParser{}, "", `{"choices":[{"delta":{"reasoning_content":"x","content":"y"}}]}`, PartReasoning | PartAnswer, -1},
		{"chat tool", &openAIParser{}, "", `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"a\""}}]}}]}`, PartTool, -1},
		{"sglang usage", &openAIParser{}, "", `{"choices":[],"usage":{"completion_tokens":200,"reasoning_tokens":200}}`, 0, 200},
		{"openai usage", &openAIParser{}, "", `{"choices":[],"usage":{"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":5}}}`, 0, 5},
		{"anthropic thinking", &anthropicParser{}, "", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"I"}}`, PartReasoning, -1},
		{"anthropic tool", &anthropicParser{}, "", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\""}}`, PartTool, -1},
		{"anthropic usage", &anthropicParser{}, "", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":373,"output_tokens_details":{"thinking_tokens":62}}}`, 0, 62},
	} {
		ev, err := c.parser.ParseEvent([]byte(c.event), []byte(c.data))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if ev.Parts != c.parts {
			t.Errorf("%s: parts %b, want %b", c.name, ev.Parts, c.parts)
		}
		if got := map[bool]int{false: -1, true: ev.ReasoningTokens}[ev.HasReasoning]; got != c.reasoning {
			t.Errorf("%s: reasoning tokens %d, want %d", c.name, got, c.reasoning)
		}
	}
}

// TestPhasesEstimatesAndInterleaving: without a server count n is shared by
// the phases' events (estimated), and a phase interleaved with the other
// has no TPOT of its own.
func TestPhasesEstimatesAndInterleaving(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	R, A := PartReasoning, PartAnswer
	r := &Result{OK: true, EventOffsets: ms(10, 20, 30, 40, 50), EventParts: []Part{R, R, R, A, A},
		Events: 5, OutputTokens: 10, TokensSource: TokensUsage}
	ph := r.Phases()
	if !ph.Split || ph.Reasoning != 6 || ph.Answer != 4 || !ph.Approx() || ph.TTFA != 40*time.Millisecond {
		t.Errorf("proportional split %+v, want 6 + 4 estimated, TTFA 40 ms", ph)
	}
	if ph.ReasoningTPOT != 20*time.Millisecond/5 || ph.AnswerTPOT != 10*time.Millisecond/3 {
		t.Errorf("phase TPOTs %v %v, want 4ms and 3.33ms", ph.ReasoningTPOT, ph.AnswerTPOT)
	}
	// Tokens per event known (per-chunk usage): exact sums.
	r.TokensPerEvent = []int{1, 2, 3, 2, 2}
	if ph = r.Phases(); ph.Reasoning != 6 || ph.Answer != 4 || ph.Approx() {
		t.Errorf("per-event split %+v", ph)
	}
	// Reasoning resumes after the answer began (thinking between tool
	// calls): first times stand, phase TPOTs do not.
	r = &Result{OK: true, EventOffsets: ms(10, 20, 30, 40), EventParts: []Part{R, A, R, A | PartTool},
		Events: 4, OutputTokens: 8, TokensSource: TokensUsage, ReasoningReported: 4, HasReasoningReported: true}
	ph = r.Phases()
	if ph.TTFA != 20*time.Millisecond || !ph.HasTool || ph.FirstTool != 40*time.Millisecond || ph.HasReasoningTPOT || ph.HasAnswerTPOT {
		t.Errorf("interleaved %+v", ph)
	}
	if (&Result{EventOffsets: ms(1), EventParts: []Part{A}}).Phases().HasAnswer {
		t.Error("a failed result has phases")
	}
}

// TestThinkTags: a model served without a reasoning parser streams its
// reasoning as answer text between <think> and </think>; the tags make it
// reasoning, even split across events (llama.cpp's native /completion).
func TestThinkTags(t *testing.T) {
	native := func(content string) string {
		return `{"content":` + quote(content) + `,"tokens":[1],"stop":false}`
	}
	for _, c := range []struct {
		name      string
		contents  []string
		firstAns  int
		reasoning int
		answer    int
	}{
		{"whole tags", []string{"<think>", "\nLet", " me", "</think>", "\n\nHello", " world"}, 4, 4, 2},
		{"split tags", []string{"\n<th", "ink>Hm", "m</thi", "nk>The", " end"}, 3, 3, 2},
		{"no tags", []string{"Hello", " <think>", " world"}, 0, 0, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps := []step{}
			for _, s := range c.contents {
				steps = append(steps, step{Wait: 2 * time.Millisecond, Data: sseData(native(s))})
			}
			steps = append(steps, step{Data: sseData(`{"content":"","stop":true,"timings":{"predicted_n":` + itoa(len(c.contents)) + `}}`)})
			srv := server(t, scripted("text/event-stream", steps))
			r := probeOnce(t, Options{URL: srv.URL, API: LlamaCpp})
			if !r.OK {
				t.Fatalf("%s: %s", r.ErrorKind, r.Err)
			}
			ph := r.Phases()
			if !ph.HasAnswer || ph.TTFA != r.EventOffsets[c.firstAns] {
				t.Errorf("TTFA %v, want event %d at %v", ph.TTFA, c.firstAns, r.EventOffsets[c.firstAns])
			}
			if c.reasoning == 0 {
				if ph.Split || ph.Answer != c.answer {
					t.Errorf("no tags: %+v", ph)
				}
				return
			}
			if !ph.Split || ph.Reasoning != c.reasoning || ph.Answer != c.answer || ph.TokensSource != TokensEngine {
				t.Errorf("phases %+v, want %d reasoning + %d answer tokens (engine)", ph, c.reasoning, c.answer)
			}
		})
	}
}
