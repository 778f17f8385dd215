package probe

import (
	"encoding/json"
	"net/http"
)

// anthropicMessages is the Anthropic Messages stream (docs/definitions.md).
// Output tokens are the cumulative message_delta.usage.output_tokens; the
// output_tokens: 1 of message_start counts nothing that was sent.
type anthropicMessages struct{}

func (anthropicMessages) API() API            { return Anthropic }
func (anthropicMessages) Framing() Framing    { return FrameSSE }
func (anthropicMessages) Path(string) string  { return "/v1/messages" }
func (anthropicMessages) NeedsModel() bool    { return true }
func (anthropicMessages) EOFTerminates() bool { return false }
func (anthropicMessages) NewParser() Parser   { return &anthropicParser{} }

// anthropicVersion is the API version header the Messages API requires.
const anthropicVersion = "2023-06-01"

func (anthropicMessages) SetAuth(h http.Header, key Secret) {
	h.Set("anthropic-version", anthropicVersion)
	if key != "" {
		h.Set("x-api-key", key.Reveal())
	}
}

func (anthropicMessages) BuildRequest(s RequestSpec) ([]byte, error) {
	return json.Marshal(struct {
		Model       string        `json:"model"`
		Messages    []chatMessage `json:"messages"`
		MaxTokens   int           `json:"max_tokens"`
		Temperature float64       `json:"temperature"`
		Stream      bool          `json:"stream"`
	}{s.Model, []chatMessage{{Role: "user", Content: s.Prompt}}, s.MaxTokens, s.Temperature, true})
}

type anthropicEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		InputTokens         int `json:"input_tokens"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails *struct {
			ThinkingTokens *int `json:"thinking_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
	Message *struct {
		Model string `json:"model"`
		Usage struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Error json.RawMessage `json:"error"`
}

type anthropicParser struct{}

func (*anthropicParser) ParseEvent(name, data []byte) (Event, error) {
	var e anthropicEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	if e.Type == "" {
		e.Type = string(name)
	}
	var ev Event
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			ev.Model, ev.PromptTokens = e.Message.Model, e.Message.Usage.InputTokens
		}
	case "content_block_delta":
		// text_delta, thinking_delta, input_json_delta (partial_json may be
		// ""), signature_delta (not output text).
		switch e.Delta.Type {
		case "text_delta":
			ev.Text, ev.Parts = e.Delta.Text, PartAnswer
		case "thinking_delta":
			ev.Text, ev.Parts = e.Delta.Thinking, PartReasoning
		case "input_json_delta":
			ev.Text, ev.Parts = e.Delta.PartialJSON, PartTool
		}
	case "message_delta":
		if e.Usage != nil {
			ev.HasTokens, ev.CumTokens, ev.TokensSource = true, e.Usage.OutputTokens, TokensUsage
			ev.PromptTokens = e.Usage.InputTokens
			if d := e.Usage.OutputTokensDetails; d != nil && d.ThinkingTokens != nil {
				ev.ReasoningTokens, ev.HasReasoning = *d.ThinkingTokens, true
			}
		}
		ev.Finished = e.Delta.StopReason != ""
	case "message_stop":
		ev.Done, ev.Finished = true, true
	case "error":
		ev.ErrMsg = firstNonEmpty(errorMessage(e.Error), "error event")
	}
	return ev, nil
}
