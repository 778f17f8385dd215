package probe

import (
	"encoding/json"
	"net/http"
)

// openAIResponses is the Responses API stream: typed
// events, text in response.output_text.delta, usage in the terminal
// response.completed, no [DONE].
type openAIResponses struct{}

func (openAIResponses) API() API                          { return OpenAIResponses }
func (openAIResponses) Framing() Framing                  { return FrameSSE }
func (openAIResponses) Path(string) string                { return "/v1/responses" }
func (openAIResponses) NeedsModel() bool                  { return true }
func (openAIResponses) EOFTerminates() bool               { return false }
func (openAIResponses) SetAuth(h http.Header, key Secret) { bearer(h, key) }
func (openAIResponses) NewParser() Parser                 { return &responsesParser{} }

func (openAIResponses) BuildRequest(s RequestSpec) ([]byte, error) {
	// The Responses API has no seed; usage always comes with completion.
	return json.Marshal(struct {
		Model           string  `json:"model"`
		Input           string  `json:"input"`
		MaxOutputTokens int     `json:"max_output_tokens"`
		Temperature     float64 `json:"temperature"`
		Stream          bool    `json:"stream"`
	}{s.Model, s.Prompt, s.MaxTokens, s.Temperature, true})
}

type responsesEvent struct {
	Type     string          `json:"type"`
	Delta    string          `json:"delta"`
	Error    json.RawMessage `json:"error"`
	Message  string          `json:"message"`
	Response *struct {
		Model  string          `json:"model"`
		Status string          `json:"status"`
		Error  json.RawMessage `json:"error"`
		Usage  *struct {
			InputTokens         int `json:"input_tokens"`
			OutputTokens        int `json:"output_tokens"`
			OutputTokensDetails *struct {
				ReasoningTokens *int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
}

type responsesParser struct{}

func (*responsesParser) ParseEvent(name, data []byte) (Event, error) {
	var e responsesEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	if e.Type == "" {
		e.Type = string(name) // the payload repeats the event name; trust either
	}
	var ev Event
	if e.Response != nil {
		ev.Model = e.Response.Model
		if u := e.Response.Usage; u != nil {
			ev.HasTokens, ev.CumTokens, ev.PromptTokens, ev.TokensSource = true, u.OutputTokens, u.InputTokens, TokensUsage
			if d := u.OutputTokensDetails; d != nil && d.ReasoningTokens != nil {
				ev.ReasoningTokens, ev.HasReasoning = *d.ReasoningTokens, true
			}
		}
	}
	switch e.Type {
	case "response.output_text.delta", "response.refusal.delta":
		ev.Text, ev.Parts = e.Delta, PartAnswer
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		ev.Text, ev.Parts = e.Delta, PartReasoning
	case "response.function_call_arguments.delta":
		ev.Text, ev.Parts = e.Delta, PartTool
	case "response.completed", "response.incomplete":
		// incomplete is how max_output_tokens ends a response: for a
		// probe with a token budget that is a normal, complete stream.
		ev.Done, ev.Finished = true, true
	case "error":
		ev.ErrMsg = firstNonEmpty(errorMessage(e.Error), e.Message, "error event")
	case "response.failed":
		msg := ""
		if e.Response != nil {
			msg = errorMessage(e.Response.Error)
		}
		ev.ErrMsg = firstNonEmpty(msg, "response.failed")
	}
	return ev, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
