package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// openAIRequest is the subset of the OpenAI chat/completions body the
// simulator honours; other fields (temperature, top_p, ...) are accepted
// and ignored, as vLLM does with sampling knobs that do not change timing.
type openAIRequest struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           json.RawMessage `json:"max_tokens"`
	MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
	MinTokens           json.RawMessage `json:"min_tokens"`
	N                   json.RawMessage `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"` // vLLM: usage on every chunk
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
}

// parsed is a validated request.
type parsed struct {
	req    Request
	stream bool
	usage  streamUsage
}

// streamUsage says which stream chunks carry usage: the final usage chunk
// (include_usage) and, as vLLM does with continuous_usage_stats (only
// with include_usage), every chunk, counting the tokens so far.
type streamUsage struct {
	final, continuous bool
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// intParam parses an optional integer parameter that must be >= minV.
func intParam(raw json.RawMessage, name string, minV int) (int, *apiError) {
	if isNull(raw) {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != float64(int(f)) {
		return 0, badRequest(name, fmt.Sprintf("%s must be an integer, got %s", name, raw))
	}
	if int(f) < minV {
		return 0, badRequest(name, fmt.Sprintf("%s must be at least %d, got %d.", name, minV, int(f)))
	}
	return int(f), nil
}

// parseRequest decodes and validates a body for /v1/chat/completions
// (chat) or /v1/completions.
func parseRequest(body []byte, chat bool) (parsed, *apiError) {
	var r openAIRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return parsed{}, badRequest("", "Invalid JSON body: "+err.Error())
	}
	var p parsed
	p.req.Model = r.Model
	p.stream = r.Stream
	if r.Stream && r.StreamOptions != nil && r.StreamOptions.IncludeUsage {
		p.usage = streamUsage{final: true, continuous: r.StreamOptions.ContinuousUsageStats}
	}
	p.req.IgnoreEOS = r.IgnoreEOS
	var aerr *apiError
	maxRaw := r.MaxTokens
	if chat && isNull(maxRaw) {
		maxRaw = r.MaxCompletionTokens
	}
	if p.req.MaxTokens, aerr = intParam(maxRaw, "max_tokens", 1); aerr != nil {
		return p, aerr
	}
	if p.req.MinTokens, aerr = intParam(r.MinTokens, "min_tokens", 0); aerr != nil {
		return p, aerr
	}
	if n, aerr := intParam(r.N, "n", 1); aerr != nil {
		return p, aerr
	} else if n > 1 {
		return p, badRequest("n", "the simulator supports n=1 only")
	}
	if chat {
		p.req.Prompt, p.req.PromptTokens, aerr = chatPrompt(r.Messages)
	} else {
		p.req.Prompt, p.req.PromptTokens, aerr = completionPrompt(r.Prompt)
	}
	return p, aerr
}

// chatPrompt flattens messages to text and estimates tokens including the
// chat template's per-message markers.
func chatPrompt(raw json.RawMessage) (string, int, *apiError) {
	if isNull(raw) {
		return "", 0, badRequest("messages", "Field required: messages")
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return "", 0, badRequest("messages", "messages must be a list of {role, content} objects")
	}
	if len(msgs) == 0 {
		return "", 0, badRequest("messages", "messages must not be empty")
	}
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == "" {
			return "", 0, badRequest("messages", "each message needs a role")
		}
		b.WriteString(m.Role)
		b.WriteString(": ")
		var text string
		if json.Unmarshal(m.Content, &text) != nil && !isNull(m.Content) {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return "", 0, badRequest("messages", "message content must be a string or a list of parts")
			}
			for _, p := range parts {
				text += p.Text
			}
		}
		b.WriteString(text)
		b.WriteByte('\n')
	}
	content := b.String()
	return content, EstimateTokens(content) + chatTemplateTokens*len(msgs), nil
}

// completionPrompt accepts a string, a one-element list of strings, or a
// list of token ids.
func completionPrompt(raw json.RawMessage) (string, int, *apiError) {
	if isNull(raw) {
		return "", 0, badRequest("prompt", "Field required: prompt")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return "", 0, badRequest("prompt", "prompt must not be empty")
		}
		return s, 0, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		if len(list) != 1 || list[0] == "" {
			return "", 0, badRequest("prompt", "the simulator supports exactly one non-empty prompt")
		}
		return list[0], 0, nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil && len(ids) > 0 {
		return string(raw), len(ids), nil
	}
	return "", 0, badRequest("prompt", "prompt must be a string, a list of one string, or a list of token ids")
}
