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
