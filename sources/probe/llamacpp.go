package probe

import (
	"encoding/json"
	"net/http"
)

// llamaCppCompletion is llama.cpp's native /completion stream: `content`
// per event, `tokens_predicted` as a running engine count,
// a final stop: true event with `timings` (kept as server-side figures).
// prompt_progress events come before any token and are not token-bearing.
type llamaCppCompletion struct{}

func (llamaCppCompletion) API() API                          { return LlamaCpp }
func (llamaCppCompletion) Framing() Framing                  { return FrameSSE }
func (llamaCppCompletion) Path(string) string                { return "/completion" }
func (llamaCppCompletion) NeedsModel() bool                  { return false }
func (llamaCppCompletion) EOFTerminates() bool               { return false }
func (llamaCppCompletion) SetAuth(h http.Header, key Secret) { bearer(h, key) }
func (llamaCppCompletion) NewParser() Parser                 { return &llamaCppParser{} }

func (llamaCppCompletion) BuildRequest(s RequestSpec) ([]byte, error) {
	return json.Marshal(struct {
		Prompt      string  `json:"prompt"`
		NPredict    int     `json:"n_predict"`
		Temperature float64 `json:"temperature"`
		Seed        *int64  `json:"seed,omitempty"`
		Stream      bool    `json:"stream"`
	}{s.Prompt, s.MaxTokens, s.Temperature, s.Seed, true})
}

type llamaCppEvent struct {
	Content         string            `json:"content"`
	Tokens          []json.RawMessage `json:"tokens"`
	Stop            bool              `json:"stop"`
	TokensPredicted *int              `json:"tokens_predicted"`
	TokensEvaluated int               `json:"tokens_evaluated"`
	Timings         *LlamaCppTimings  `json:"timings"`
	Model           string            `json:"model"`
	Error           json.RawMessage   `json:"error"`
}

type llamaCppParser struct{}

func (*llamaCppParser) ParseEvent(_, data []byte) (Event, error) {
	if isDone(data) { // the OpenAI-style routes of newer builds
		return Event{Done: true}, nil
	}
	var e llamaCppEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, err
	}
	ev := Event{Model: e.Model, Text: e.Content, PromptTokens: e.TokensEvaluated, LlamaCpp: e.Timings}
	if msg := errorMessage(e.Error); msg != "" {
		ev.ErrMsg = msg
		return ev, nil
	}
	if ev.Text != "" {
		ev.EventTokens = len(e.Tokens)
	}
	switch {
	case e.Timings != nil && e.Timings.PredictedN > 0:
		ev.HasTokens, ev.CumTokens, ev.TokensSource = true, e.Timings.PredictedN, TokensEngine
	case e.TokensPredicted != nil:
		ev.HasTokens, ev.CumTokens, ev.TokensSource = true, *e.TokensPredicted, TokensEngine
	}
	if e.Stop {
		ev.Done, ev.Finished = true, true
	}
	return ev, nil
}
