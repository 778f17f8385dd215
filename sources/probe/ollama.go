package probe

import (
	"encoding/json"
	"net/http"
	"time"
)

// ollama is /api/generate or /api/chat: NDJSON, final
// line done: true with server-side durations in nanoseconds, kept next to
// the client's own figures.
type ollama struct{ chat bool }

func (o ollama) API() API {
	if o.chat {
		return OllamaChat
	}
	return OllamaGenerate
}
func (ollama) Framing() Framing                  { return FrameNDJSON }
func (ollama) NeedsModel() bool                  { return true }
func (ollama) EOFTerminates() bool               { return false }
func (ollama) SetAuth(h http.Header, key Secret) { bearer(h, key) }
func (ollama) NewParser() Parser                 { return &ollamaParser{} }

func (o ollama) Path(string) string {
	if o.chat {
		return "/api/chat"
	}
	return "/api/generate"
}

func (o ollama) BuildRequest(s RequestSpec) ([]byte, error) {
	type options struct {
		NumPredict  int     `json:"num_predict"`
		Temperature float64 `json:"temperature"`
		Seed        *int64  `json:"seed,omitempty"`
	}
	opts := options{s.MaxTokens, s.Temperature, s.Seed}
	if o.chat {
		return json.Marshal(struct {
			Model    string        `json:"model"`
			Messages []chatMessage `json:"messages"`
			Stream   bool          `json:"stream"`
			Options  options       `json:"options"`
		}{s.Model, []chatMessage{{Role: "user", Content: s.Prompt}}, true, opts})
	}
	return json.Marshal(struct {
		Model   string  `json:"model"`
		Prompt  string  `json:"prompt"`
		Stream  bool    `json:"stream"`
		Options options `json:"options"`
	}{s.Model, s.Prompt, true, opts})
}

type ollamaLine struct {
	Model    string `json:"model"`
	Response string `json:"response"`
	Thinking string `json:"thinking"`
	Message  *struct {
		Content   string `json:"content"`
		Thinking  string `json:"thinking"`
		ToolCalls []struct {
			Function struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Done               bool            `json:"done"`
	Error              json.RawMessage `json:"error"`
	TotalDuration      int64           `json:"total_duration"`
	LoadDuration       int64           `json:"load_duration"`
	PromptEvalCount    int             `json:"prompt_eval_count"`
	PromptEvalDuration int64           `json:"prompt_eval_duration"`
	EvalCount          *int            `json:"eval_count"`
	EvalDuration       int64           `json:"eval_duration"`
}

type ollamaParser struct{}

func (*ollamaParser) ParseEvent(_, data []byte) (Event, error) {
	var l ollamaLine
	if err := json.Unmarshal(data, &l); err != nil {
		return Event{}, err
	}
	ev := Event{Model: l.Model}
	if msg := errorMessage(l.Error); msg != "" {
		ev.ErrMsg = msg
		return ev, nil
	}
	ev.Text = l.Thinking + l.Response
	ev.Parts = partIf(l.Thinking, PartReasoning) | partIf(l.Response, PartAnswer)
	if m := l.Message; m != nil {
		ev.Text += m.Thinking + m.Content
		ev.Parts |= partIf(m.Thinking, PartReasoning) | partIf(m.Content, PartAnswer)
		for _, tc := range m.ToolCalls {
			// Ollama sends whole tool calls, not fragments: the
			// arguments object is the output text of that event.
			if len(tc.Function.Arguments) > 0 && string(tc.Function.Arguments) != "null" {
				ev.Text += string(tc.Function.Arguments)
				ev.Parts |= PartTool
			}
		}
	}
	if l.Done {
		ev.Done, ev.Finished = true, true
		ev.PromptTokens = l.PromptEvalCount
		if l.EvalCount != nil {
			ev.HasTokens, ev.CumTokens, ev.TokensSource = true, *l.EvalCount, TokensEngine
		}
		ev.Ollama = &OllamaTimings{
			TotalDuration:      time.Duration(l.TotalDuration),
			LoadDuration:       time.Duration(l.LoadDuration),
			PromptEvalCount:    l.PromptEvalCount,
			PromptEvalDuration: time.Duration(l.PromptEvalDuration),
			EvalDuration:       time.Duration(l.EvalDuration),
		}
		if l.EvalCount != nil {
			ev.Ollama.EvalCount = *l.EvalCount
		}
	}
	return ev, nil
}

// partIf is part when s holds text.
func partIf(s string, part Part) Part {
	if s == "" {
		return 0
	}
	return part
}
