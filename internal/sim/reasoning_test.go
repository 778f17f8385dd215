package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sources/probe"
)

func reasoningModel() ModelSpec {
	spec := stepModel("thinker", 5*time.Millisecond, 1e6)
	spec.ReasoningTokens = 20
	return spec
}

// A reasoning model streams its thinking as delta.reasoning_content
// before the answer, and counts it in usage; ttftop's probe sees the
// answer start after the thinking: TTFA ≈ TTFT + reasoning tokens × step.
func TestReasoningPhaseOnChat(t *testing.T) {
	s := startServer(t, Config{Models: []ModelSpec{reasoningModel()}})
	p, err := probe.New(probe.Options{URL: s.URL(), API: probe.OpenAIChat, Model: "thinker", MaxTokens: 80})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	retry(t, func() error {
		res := p.Do(context.Background(), nil)
		if !res.OK {
			t.Fatalf("probe failed: %s %s", res.ErrorKind, res.Err)
		}
		ph := res.Phases()
		if !ph.HasAnswer || !ph.Split || ph.TokensSource != probe.TokensUsage || !res.HasReasoningReported {
			t.Fatalf("phases %+v (reported %v)", ph, res.HasReasoningReported)
		}
		if ph.Reasoning < 5 || ph.Reasoning > 80 || ph.Answer < 1 || ph.Reasoning+ph.Answer != res.OutputTokens {
			t.Fatalf("reasoning %d answer %d of %d tokens", ph.Reasoning, ph.Answer, res.OutputTokens)
		}
		want := res.TTFT + time.Duration(ph.Reasoning)*5*time.Millisecond
		if !within(ph.TTFA, want, 3*time.Millisecond) {
			return fmt.Errorf("TTFA %v, want ≈ %v (TTFT %v + %d × 5 ms)", ph.TTFA, want, res.TTFT, ph.Reasoning)
		}
		return nil
	})
}

// The chunks themselves: reasoning_content first, then content, never
// both in one chunk; the non-streaming answer splits the same way.
func TestReasoningWireFormat(t *testing.T) {
	s := startServer(t, Config{Models: []ModelSpec{reasoningModel()}})
	_, raw := postJSON(t, s.URL(), "/v1/chat/completions",
		`{"model":"thinker","stream":true,"stream_options":{"include_usage":true},"max_tokens":80,"messages":[{"role":"user","content":"why?"}]}`)
	thinking, answering, usage := 0, 0, ""
	for _, line := range strings.Split(string(raw), "\n") {
		ev, ok := strings.CutPrefix(line, "data: ")
		var c struct {
			Choices []struct {
				Delta map[string]*string `json:"delta"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		if !ok || ev == "[DONE]" || json.Unmarshal([]byte(ev), &c) != nil {
			continue
		}
		if len(c.Usage) > 0 {
			usage = string(c.Usage)
		}
		if len(c.Choices) == 0 {
			continue
		}
		d := c.Choices[0].Delta
		switch {
		case d["reasoning_content"] != nil && d["content"] != nil:
			t.Fatalf("chunk with both phases: %s", ev)
		case d["reasoning_content"] != nil:
			if answering > 0 {
				t.Fatalf("reasoning after the answer began: %s", ev)
			}
			thinking++
		case d["content"] != nil && d["role"] == nil:
			answering++
		}
	}
	if thinking == 0 || answering == 0 || !strings.Contains(usage, `"completion_tokens":`+itoa(thinking+answering)+`,`) ||
		!strings.HasSuffix(usage, `"completion_tokens_details":{"reasoning_tokens":`+itoa(thinking)+`}}`) {
		t.Errorf("thinking %d, answering %d, usage %s", thinking, answering, usage)
	}

	_, body := postJSON(t, s.URL(), "/v1/chat/completions", `{"model":"thinker","max_tokens":80,"messages":[{"role":"user","content":"why?"}]}`)
	var resp struct {
		Choices []struct {
			Message struct {
				ReasoningContent string `json:"reasoning_content"`
				Content          string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			Details struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("response %s: %v", body, err)
	}
	m := resp.Choices[0].Message
	if m.ReasoningContent == "" || m.Content == "" || resp.Usage.Details.ReasoningTokens != thinking {
		t.Errorf("non-streaming: reasoning %q, content %q, reasoning tokens %d (streamed %d)",
			m.ReasoningContent, m.Content, resp.Usage.Details.ReasoningTokens, thinking)
	}
}

// Names of reasoning families think; others answer at once.
func TestSpecForSizeReasoning(t *testing.T) {
	for name, want := range map[string]int{
		"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": defaultReasoningTokens,
		"Qwen/QwQ-32B":                       defaultReasoningTokens,
		"openai/gpt-oss-20b":                 defaultReasoningTokens,
		"meta-llama/Llama-3.1-8B-Instruct":   0,
		"mistralai/Mistral-7B-Instruct-v0.3": 0,
	} {
		spec, err := SpecForSize(name, "8b")
		if err != nil || spec.ReasoningTokens != want {
			t.Errorf("%s: reasoning %d (%v), want %d", name, spec.ReasoningTokens, err, want)
		}
	}
}
