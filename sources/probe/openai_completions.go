package probe

import (
	"encoding/json"
	"net/http"
)

// openAICompletions is /v1/completions with stream: true: text in
// choices[].text, no role chunk, usage chunk last.
type openAICompletions struct{}

func (openAICompletions) API() API                          { return OpenAICompletions }
func (openAICompletions) Framing() Framing                  { return FrameSSE }
func (openAICompletions) Path(string) string                { return "/v1/completions" }
func (openAICompletions) NeedsModel() bool                  { return true }
func (openAICompletions) EOFTerminates() bool               { return false }
func (openAICompletions) SetAuth(h http.Header, key Secret) { bearer(h, key) }

// The chunk shape is the chat one with text instead of delta, so the chat
// parser serves both.
func (openAICompletions) NewParser() Parser { return &openAIParser{} }

func (openAICompletions) BuildRequest(s RequestSpec) ([]byte, error) {
	body := struct {
		Model         string         `json:"model"`
		Prompt        string         `json:"prompt"`
		MaxTokens     int            `json:"max_tokens"`
		Temperature   float64        `json:"temperature"`
		Seed          *int64         `json:"seed,omitempty"`
		Stream        bool           `json:"stream"`
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
		// vLLM's per-request metrics (sent only when asked: strict
		// servers reject unknown fields).
		IncludeMetrics bool `json:"include_metrics,omitempty"`
	}{
		Model:          s.Model,
		Prompt:         s.Prompt,
		MaxTokens:      s.MaxTokens,
		Temperature:    s.Temperature,
		Seed:           s.Seed,
		Stream:         true,
		IncludeMetrics: s.IncludeMetrics,
	}
	if s.IncludeUsage {
		body.StreamOptions = &streamOptions{IncludeUsage: true, ContinuousUsageStats: s.ContinuousUsage}
	}
	return json.Marshal(body)
}
