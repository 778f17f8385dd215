package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// openAIStreaming is what OpenAI's two streaming endpoints share: SSE
// framing, a model required, a bearer key, and one chunk parser (the
// completions chunk is the chat one with text instead of delta).
type openAIStreaming struct{}

func (openAIStreaming) Framing() Framing                  { return FrameSSE }
func (openAIStreaming) NeedsModel() bool                  { return true }
func (openAIStreaming) EOFTerminates() bool               { return false }
func (openAIStreaming) SetAuth(h http.Header, key Secret) { bearer(h, key) }
func (openAIStreaming) NewParser() Parser                 { return &openAIParser{} }

// openAIStreamFields are the request fields both endpoints take after the
// model and the prompt or messages.
type openAIStreamFields struct {
	MaxTokens     int            `json:"max_tokens"`
	Temperature   float64        `json:"temperature"`
	Seed          *int64         `json:"seed,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	// vLLM's per-request metrics (sent only when asked: strict servers
	// reject unknown fields).
	IncludeMetrics bool `json:"include_metrics,omitempty"`
}

func newOpenAIStreamFields(s RequestSpec) openAIStreamFields {
	f := openAIStreamFields{MaxTokens: s.MaxTokens, Temperature: s.Temperature, Seed: s.Seed,
		Stream: true, IncludeMetrics: s.IncludeMetrics}
	if s.IncludeUsage {
		// Without it the count of output tokens is only an estimate.
		f.StreamOptions = &streamOptions{IncludeUsage: true, ContinuousUsageStats: s.ContinuousUsage}
	}
	return f
}

// openAIChat is /v1/chat/completions with stream: true (docs/definitions.md).
type openAIChat struct{ openAIStreaming }

func (openAIChat) API() API           { return OpenAIChat }
func (openAIChat) Path(string) string { return "/v1/chat/completions" }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats,omitempty"` // vLLM only
}

func (openAIChat) BuildRequest(s RequestSpec) ([]byte, error) {
	return json.Marshal(struct {
		Model    string        `json:"model"`
		Messages []chatMessage `json:"messages"`
		openAIStreamFields
	}{s.Model, []chatMessage{{Role: "user", Content: s.Prompt}}, newOpenAIStreamFields(s)})
}

// openAIChunk covers chat and completions chunks and the variants real
// servers send: text and delta in one choice, usage on every chunk,
// llama.cpp timings on the usage chunk, a top-level error object.
type openAIChunk struct {
	Model   *onceString `json:"model"`
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Function struct {
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens            int  `json:"prompt_tokens"`
		CompletionTokens        int  `json:"completion_tokens"`
		ReasoningTokens         *int `json:"reasoning_tokens"` // SGLang puts it here
		CompletionTokensDetails *struct {
			ReasoningTokens *int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Timings *LlamaCppTimings `json:"timings"`
	Metrics *VLLMMetrics     `json:"metrics"`
	Error   json.RawMessage  `json:"error"`
}

// openAIParser parses chat and completions chunks. It runs for every
// event of the most common format, so it reuses its decoder (scanner
// state and decode buffers) and its choices array across events.
type openAIParser struct {
	chunk openAIChunk
	model onceString
	text  strings.Builder
	src   bytes.Reader
	dec   *json.Decoder
	fed   int64 // bytes given to dec, to find where a value ended
}

// decode decodes exactly one JSON value from data into v.
func (p *openAIParser) decode(data []byte, v any) error {
	if p.dec == nil {
		p.dec, p.fed = json.NewDecoder(&p.src), 0
	}
	p.src.Reset(data)
	err := p.dec.Decode(v)
	if err == nil {
		// One event is one value: anything after it is a broken event
		// and must not be decoded as the next one.
		end := int(p.dec.InputOffset() - p.fed)
		if end < 0 || end > len(data) || len(bytes.TrimSpace(data[end:])) > 0 {
			err = errors.New("invalid data after the JSON value")
		}
	}
	p.fed += int64(len(data))
	if err != nil {
		p.dec = nil // a failed decoder keeps its state; start afresh
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
	}
	return err
}

// resetChunk empties p.chunk for the next event, keeping the choices
// array but zeroing it: encoding/json decodes into reused elements
// without clearing fields the new chunk lacks.
func (p *openAIParser) resetChunk() {
	choices := p.chunk.Choices[:cap(p.chunk.Choices)]
	clear(choices)
	p.chunk = openAIChunk{Choices: choices[:0], Model: &p.model}
}

func (p *openAIParser) ParseEvent(_, data []byte) (Event, error) {
	if isDone(data) {
		return Event{Done: true}, nil
	}
	p.resetChunk()
	if model, hasModel, ok := decodeCommonChunk(data, &p.chunk); ok {
		if hasModel && !p.model.set {
			p.model = onceString{s: string(model), set: true}
		}
	} else {
		p.resetChunk()
		if err := p.decode(data, &p.chunk); err != nil {
			return Event{}, err
		}
	}
	return p.event(data), nil
}

// event is the decoded p.chunk as an Event (data is the raw chunk).
func (p *openAIParser) event(data []byte) Event {
	c := &p.chunk
	ev := Event{Model: p.model.s}
	if msg := errorMessage(c.Error); msg != "" {
		ev.ErrMsg = msg
		return ev
	}
	if len(c.Choices) == 0 && c.Usage == nil && bytes.Contains(data, []byte(`"error"`)) {
		// Older vLLM/FastChat error chunk: {"object":"error","message":…}.
		var old struct {
			Object  string `json:"object"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &old) == nil && old.Object == "error" {
			ev.ErrMsg = firstNonEmpty(old.Message, "error event")
			return ev
		}
	}
	// The text of every choice and kind (reasoning, content, tool-call
	// arguments). The usual single fragment is used as decoded, without
	// a copy: this runs for every event.
	var parts int
	p.text.Reset()
	add := func(s string, part Part) {
		if s == "" {
			return
		}
		ev.Parts |= part
		if parts++; parts == 1 {
			ev.Text = s
			return
		}
		if parts == 2 {
			p.text.WriteString(ev.Text)
		}
		p.text.WriteString(s)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		d := &ch.Delta
		add(d.ReasoningContent, PartReasoning)
		add(d.Reasoning, PartReasoning)
		if d.Content != "" {
			add(d.Content, PartAnswer)
		} else {
			add(ch.Text, PartAnswer) // completions, or providers sending both
		}
		for j := range d.ToolCalls {
			add(d.ToolCalls[j].Function.Arguments, PartTool)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			ev.Finished = true
		}
	}
	if parts > 1 {
		ev.Text = p.text.String()
	}
	if c.Usage != nil {
		ev.HasTokens = true
		ev.CumTokens = c.Usage.CompletionTokens
		ev.TokensSource = TokensUsage
		ev.PromptTokens = c.Usage.PromptTokens
		reasoning := c.Usage.ReasoningTokens
		if d := c.Usage.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
			reasoning = d.ReasoningTokens
		}
		if reasoning != nil {
			ev.ReasoningTokens, ev.HasReasoning = *reasoning, true
		}
	}
	ev.LlamaCpp, ev.VLLM = c.Timings, c.Metrics
	return ev
}

// onceString keeps the first value decoded into it and skips the rest
// without allocating: every chunk repeats the model id.
type onceString struct {
	s   string
	set bool
}

func (o *onceString) UnmarshalJSON(b []byte) error {
	if o.set {
		return nil
	}
	o.set = true
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &o.s)
}

// errorMessage extracts a message from an "error" member that is an
// object ({"message": …}), a string, or absent/null.
func errorMessage(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		switch {
		case obj.Message != "":
			return obj.Message
		case obj.Type != "":
			return obj.Type
		}
		return string(raw)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s
	}
	return string(raw)
}
