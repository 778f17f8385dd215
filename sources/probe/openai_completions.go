package probe

import (
	"encoding/json"
)

// openAICompletions is /v1/completions with stream: true: text in
// choices[].text, no role chunk, usage chunk last.
type openAICompletions struct{ openAIStreaming }

func (openAICompletions) API() API           { return OpenAICompletions }
func (openAICompletions) Path(string) string { return "/v1/completions" }

func (openAICompletions) BuildRequest(s RequestSpec) ([]byte, error) {
	return json.Marshal(struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		openAIStreamFields
	}{s.Model, s.Prompt, newOpenAIStreamFields(s)})
}
