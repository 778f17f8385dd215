package probe

import (
	"bytes"
	"net/http"
	"time"
)

// Framing is how a protocol delimits events on the wire.
type Framing int

const (
	FrameSSE    Framing = iota // text/event-stream
	FrameNDJSON                // one JSON object per line (Ollama)
)

// RequestSpec is what every protocol turns into a request body.
type RequestSpec struct {
	Model        string
	Prompt       string
	MaxTokens    int
	Temperature  float64
	Seed         *int64
	IncludeUsage bool // ask for a final usage chunk where the protocol needs asking
	// ContinuousUsage asks vLLM for usage on every chunk too.
	ContinuousUsage bool
	// IncludeMetrics asks vLLM for its per-request metrics object.
	IncludeMetrics bool
}

// Protocol is one wire format. Implementations are stateless and shared
// by concurrent requests; per-request state lives in the Parser.
type Protocol interface {
	API() API
	Framing() Framing
	// Path is the endpoint path below the server root.
	Path(model string) string
	// NeedsModel says whether the request body (or path) must name a model.
	NeedsModel() bool
	BuildRequest(spec RequestSpec) ([]byte, error)
	// SetAuth puts the API key where this API expects it.
	SetAuth(h http.Header, key Secret)
	// EOFTerminates is true for formats whose only end marker is EOF (Triton).
	EOFTerminates() bool
	NewParser() Parser
}

// Parser decodes one request's events. It may keep state between events
// and reuse its decode buffers (so no per-event allocation beyond text).
type Parser interface {
	// ParseEvent decodes one event: name is the SSE event field (nil for
	// NDJSON or when absent); data is only valid during the call.
	ParseEvent(name, data []byte) (Event, error)
}

// Event is what one wire event means to the measurement core.
type Event struct {
	// Text is the output text the event carries (content, reasoning,
	// tool-call arguments). Non-empty Text makes it token-bearing.
	Text string
	// Parts says which kinds of output Text holds; zero with non-empty
	// Text means answer text (formats that do not separate reasoning).
	Parts Part
	// CumTokens, when HasTokens, is the cumulative count of output tokens
	// the server reports at this event (usage or engine counter).
	CumTokens    int
	HasTokens    bool
	TokensSource TokenSource
	// EventTokens is how many tokens this event itself carries when the
	// format says so (llama.cpp `tokens`, TGI one per event); 0 = unknown.
	EventTokens  int
	PromptTokens int
	// ReasoningTokens, when HasReasoning, is the server's count of the
	// reasoning tokens among the output tokens (usage details).
	ReasoningTokens int
	HasReasoning    bool
	// Done marks the terminal event: the stream is complete.
	Done bool
	// Finished marks a finish_reason: the generation ended, even if the
	// protocol's terminal ([DONE]) never arrives (TGI 1.4.3).
	Finished bool
	// ErrMsg is an error the server reported inside the stream (raw).
	ErrMsg string
	// Model is the model id the stream names (raw), when it names one.
	Model string
	// Server-side timings reported by the engine.
	Ollama   *OllamaTimings
	LlamaCpp *LlamaCppTimings
	VLLM     *VLLMMetrics
}

// Part is a kind of output text. An event may carry several (one chunk
// ending the reasoning and starting the answer, or n > 1 choices).
type Part uint8

const (
	PartAnswer    Part = 1 << iota // the answer's text (content)
	PartReasoning                  // reasoning / thinking text
	PartTool                       // tool-call arguments (part of the answer, timed apart)
)

// TokenSource says where the output token count n comes from.
type TokenSource string

const (
	TokensUsage  TokenSource = "usage"  // API usage object
	TokensEngine TokenSource = "engine" // the engine's own counter (eval_count, predicted_n, generated_tokens)
	TokensEvents TokenSource = "events" // counted token-bearing events: an estimate
)

// OllamaTimings are the server-side durations of Ollama's final line
// (nanoseconds on the wire). Absent fields (cloud models) stay zero.
type OllamaTimings struct {
	TotalDuration      time.Duration `json:"total_duration,omitempty"`
	LoadDuration       time.Duration `json:"load_duration,omitempty"`
	PromptEvalCount    int           `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration time.Duration `json:"prompt_eval_duration,omitempty"`
	EvalCount          int           `json:"eval_count,omitempty"`
	EvalDuration       time.Duration `json:"eval_duration,omitempty"`
}

// DecodeTPS is Ollama's own decode rate, eval_count / eval_duration.
func (t *OllamaTimings) DecodeTPS() float64 {
	if t == nil || t.EvalDuration <= 0 {
		return 0
	}
	return float64(t.EvalCount) / t.EvalDuration.Seconds()
}

// LlamaCppTimings is llama.cpp's `timings` object (milliseconds).
type LlamaCppTimings struct {
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	CacheN              int     `json:"cache_n,omitempty"`
}

// VLLMMetrics is the `metrics` object vLLM adds to a response when started
// with --enable-per-request-metrics and asked with include_metrics
// (milliseconds; nil fields were not sent). Its TTFT counts from the
// request's scheduling, so it excludes the queue.
type VLLMMetrics struct {
	TimeToFirstTokenMS *float64 `json:"time_to_first_token_ms,omitempty"`
	GenerationTimeMS   *float64 `json:"generation_time_ms,omitempty"`
	QueueTimeMS        *float64 `json:"queue_time_ms,omitempty"`
	MeanITLMS          *float64 `json:"mean_itl_ms,omitempty"`
	TokensPerSecond    *float64 `json:"tokens_per_second,omitempty"`
}

// protocolFor returns the implementation of an API.
func protocolFor(a API) Protocol {
	switch a {
	case OpenAICompletions:
		return openAICompletions{}
	case OpenAIResponses:
		return openAIResponses{}
	case Anthropic:
		return anthropicMessages{}
	case TGI:
		return tgiGenerateStream{}
	case OllamaGenerate:
		return ollama{chat: false}
	case OllamaChat:
		return ollama{chat: true}
	case LlamaCpp:
		return llamaCppCompletion{}
	case Triton:
		return tritonGenerateStream{}
	default:
		return openAIChat{}
	}
}

// isDone reports the OpenAI-style "[DONE]" sentinel.
func isDone(data []byte) bool {
	return bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]"))
}

// bearer sets the usual Authorization header.
func bearer(h http.Header, key Secret) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key.Reveal())
	}
}
