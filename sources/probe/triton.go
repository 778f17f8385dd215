package probe

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// tritonGenerateStream is Triton's generate_stream extension: text_output
// deltas and no terminal marker, so EOF ends the stream and the token
// count is always an estimate.
type tritonGenerateStream struct{}

func (tritonGenerateStream) API() API                          { return Triton }
func (tritonGenerateStream) Framing() Framing                  { return FrameSSE }
func (tritonGenerateStream) NeedsModel() bool                  { return true }
func (tritonGenerateStream) EOFTerminates() bool               { return true }
func (tritonGenerateStream) SetAuth(h http.Header, key Secret) { bearer(h, key) }
func (tritonGenerateStream) NewParser() Parser                 { return &tritonParser{} }

func (tritonGenerateStream) Path(model string) string {
	return "/v2/models/" + url.PathEscape(model) + "/generate_stream"
}

func (tritonGenerateStream) BuildRequest(s RequestSpec) ([]byte, error) {
	return json.Marshal(struct {
		TextInput   string  `json:"text_input"`
		MaxTokens   int     `json:"max_tokens"`
		Temperature float64 `json:"temperature"`
		Stream      bool    `json:"stream"`
	}{s.Prompt, s.MaxTokens, s.Temperature, true})
}

type tritonEvent struct {
	ModelName  string          `json:"model_name"`
	TextOutput string          `json:"text_output"`
	Error      json.RawMessage `json:"error"`
}

type tritonParser struct{}

func (*tritonParser) ParseEvent(_, data []byte) (Event, error) {
	var e tritonEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	ev := Event{Model: e.ModelName, Text: e.TextOutput}
	if msg := errorMessage(e.Error); msg != "" {
		ev.ErrMsg = msg
		ev.Text = ""
	}
	return ev, nil
}
