package probe

import (
	"encoding/json"
	"net/http"
)

// tgiGenerateStream is TGI's native /generate_stream: one
// event per token, the last with generated_text set, no [DONE]. details:
// true makes the last event carry the engine's generated_tokens.
type tgiGenerateStream struct{}

func (tgiGenerateStream) API() API                          { return TGI }
func (tgiGenerateStream) Framing() Framing                  { return FrameSSE }
func (tgiGenerateStream) Path(string) string                { return "/generate_stream" }
func (tgiGenerateStream) NeedsModel() bool                  { return false }
func (tgiGenerateStream) EOFTerminates() bool               { return false }
func (tgiGenerateStream) SetAuth(h http.Header, key Secret) { bearer(h, key) }
func (tgiGenerateStream) NewParser() Parser                 { return &tgiParser{} }

func (tgiGenerateStream) BuildRequest(s RequestSpec) ([]byte, error) {
	type params struct {
		MaxNewTokens int    `json:"max_new_tokens"`
		DoSample     bool   `json:"do_sample"`
		Seed         *int64 `json:"seed,omitempty"`
		Details      bool   `json:"details"`
	}
	// TGI rejects temperature 0; greedy decoding is do_sample: false.
	return json.Marshal(struct {
		Inputs     string `json:"inputs"`
		Parameters params `json:"parameters"`
		Stream     bool   `json:"stream"`
	}{s.Prompt, params{MaxNewTokens: s.MaxTokens, DoSample: s.Temperature > 0, Seed: s.Seed, Details: true}, true})
}

type tgiEvent struct {
	Token *struct {
		Text    string `json:"text"`
		Special bool   `json:"special"`
	} `json:"token"`
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		FinishReason    string `json:"finish_reason"`
		GeneratedTokens int    `json:"generated_tokens"`
		InputLength     int    `json:"input_length"`
	} `json:"details"`
	Error     json.RawMessage `json:"error"`
	ErrorType string          `json:"error_type"`
}

type tgiParser struct{}

func (*tgiParser) ParseEvent(_, data []byte) (Event, error) {
	var e tgiEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	var ev Event
	if msg := errorMessage(e.Error); msg != "" {
		if e.ErrorType != "" {
			msg = e.ErrorType + ": " + msg
		}
		ev.ErrMsg = msg
		return ev, nil
	}
	if e.Token != nil && !e.Token.Special {
		ev.Text, ev.EventTokens = e.Token.Text, 1
	}
	if e.GeneratedText != nil {
		ev.Done, ev.Finished = true, true
	}
	if d := e.Details; d != nil {
		ev.HasTokens, ev.CumTokens, ev.TokensSource, ev.PromptTokens = true, d.GeneratedTokens, TokensEngine, d.InputLength
	}
	return ev, nil
}
