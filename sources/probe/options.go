package probe

import (
	"errors"
	"fmt"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
)

// API names a wire protocol, as accepted by --api.
type API string

const (
	OpenAIChat        API = "openai-chat"
	OpenAICompletions API = "openai-completions"
	OpenAIResponses   API = "openai-responses"
	Anthropic         API = "anthropic"
	TGI               API = "tgi"
	OllamaGenerate    API = "ollama-generate"
	OllamaChat        API = "ollama-chat"
	LlamaCpp          API = "llamacpp"
	Triton            API = "triton"
)

// APIs lists every protocol in the order help texts show them.
func APIs() []API {
	return []API{OpenAIChat, OpenAICompletions, OpenAIResponses, Anthropic, TGI, OllamaGenerate, OllamaChat, LlamaCpp, Triton}
}

// Defaults, in one place: a config file, the flags and the library read
// them from here, so a probe waits the same however it was set up. The
// request timeout is generous because a cold model load (Ollama) or a
// long prefill legitimately delays the first token by tens of seconds.
const (
	DefaultMaxTokens    = 64
	DefaultTimeout      = 60 * time.Second
	DefaultStallTimeout = 15 * time.Second
	DefaultInterval     = 10 * time.Second
	DefaultConcurrency  = 1
	// DefaultPrompt names the built-in prompt sent when none is given.
	DefaultPrompt = "short"
	DefaultJitter = 0.1
	// DefaultMaxLineBytes caps one SSE/NDJSON line. Tool-call and image
	// payloads exceed bufio.Scanner's 64 KiB, so the cap is far above it
	// but still bounds memory against a hostile server.
	DefaultMaxLineBytes = 16 << 20
)

// Limits are the ceilings that keep a probe from flooding a production
// endpoint, whatever the schedule asks for. Asking for more than a limit is
// an error, not a silent clamp, so a typo cannot become load.
type Limits struct {
	MaxConcurrency int `json:"max_concurrency"`
	MaxPerMinute   int `json:"max_requests_per_minute"`
}

// DefaultLimits returns the ceilings used when none are given: 16 streams
// in flight and 600 requests a minute.
func DefaultLimits() Limits { return Limits{MaxConcurrency: 16, MaxPerMinute: 600} }

// Absolute ceilings: Limits themselves cannot be raised past these.
const (
	AbsoluteMaxConcurrency = 1024
	AbsoluteMaxPerMinute   = 60000
)

// Options configures a Prober and the Runner that schedules it.
type Options struct {
	// URL is the server root (http://host:8000), the /v1 base, or a full
	// endpoint path; see Resolve.
	URL string `json:"url"`
	// API selects the protocol; empty means detect it from the URL path
	// (OpenAI chat when the path says nothing).
	API API `json:"api,omitempty"`
	// Model is sent in the request; empty means discover it from /v1/models.
	Model string `json:"model,omitempty"`
	// Name is the endpoint's key; default "<host:port>/<model>".
	Name string `json:"name,omitempty"`
	// Labels are added to the endpoint's labels (how discovery found it).
	Labels map[string]string `json:"labels,omitempty"`
	// Dial, when set, opens every connection (through an SSH tunnel).
	Dial httpclient.DialFunc `json:"-"`
	// Transport, when set, adapts the transport (the Kubernetes API
	// server's pod proxy: its TLS and credentials).
	Transport httpclient.TransportFunc `json:"-"`
	// AdapterOf is the base model when Model is a LoRA adapter on it (the
	// adapter's parent in /v1/models); the endpoint's labels say so.
	AdapterOf string `json:"adapter_of,omitempty"`

	Prompt      string  `json:"prompt,omitempty"` // text; empty = the built-in short prompt
	MaxTokens   int     `json:"max_tokens,omitempty"`
	Temperature float64 `json:"temperature"`
	Seed        *int64  `json:"seed,omitempty"`
	NoUsage     bool    `json:"no_usage,omitempty"` // do not send stream_options.include_usage (servers that reject it)
	// ContinuousUsage asks vLLM for cumulative usage on every chunk
	// (stream_options.continuous_usage_stats): the exact tokens of each
	// event, where speculative decoding sends several. Off by default:
	// servers other than vLLM may reject the field.
	ContinuousUsage bool `json:"continuous_usage,omitempty"`
	// IncludeMetrics asks vLLM (≥ 0.25, started with
	// --enable-per-request-metrics) for its per-request timings
	// (include_metrics: true, OpenAI routes only). Off by default: strict
	// servers reject unknown request fields.
	IncludeMetrics bool     `json:"include_metrics,omitempty"`
	Auth           Auth     `json:"auth"`
	Headers        []Header `json:"headers,omitempty"`

	Timeout      time.Duration `json:"timeout,omitempty"`
	StallTimeout time.Duration `json:"stall_timeout,omitempty"`
	MaxLineBytes int           `json:"max_line_bytes,omitempty"`
	// HTTP2 allows HTTP/2 over TLS. Off by default: one multiplexed
	// connection shares flow control between streams, so probes slow each other.
	HTTP2 bool `json:"http2,omitempty"`
	// Prewarm opens connections with a cheap GET before probing, so
	// connection setup does not land on measured requests.
	Prewarm bool `json:"prewarm,omitempty"`

	// Schedule (Runner and the CLI).
	Interval    time.Duration `json:"interval,omitempty"` // between probe starts; 0 = back to back
	Concurrency int           `json:"concurrency,omitempty"`
	Jitter      float64       `json:"jitter,omitempty"` // fraction of Interval, so probes of many endpoints do not run in lockstep
	Limits      Limits        `json:"limits"`
}

// withDefaults fills zero fields; it never changes a value set by the caller.
func (o Options) withDefaults() Options {
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Limits.MaxConcurrency == 0 {
		o.Limits.MaxConcurrency = DefaultLimits().MaxConcurrency
	}
	if o.Limits.MaxPerMinute == 0 {
		o.Limits.MaxPerMinute = DefaultLimits().MaxPerMinute
	}
	if o.Prompt == "" {
		o.Prompt = BuiltinPrompts()[DefaultPrompt]
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.URL == "" {
		errs = append(errs, errors.New("no URL"))
	}
	if o.MaxTokens < 1 {
		errs = append(errs, fmt.Errorf("max tokens %d: must be at least 1", o.MaxTokens))
	}
	if o.Timeout < 0 || o.StallTimeout < 0 || o.Interval < 0 {
		errs = append(errs, errors.New("timeouts and interval must not be negative"))
	}
	if o.MaxLineBytes < 1024 {
		errs = append(errs, fmt.Errorf("line cap %d bytes: must be at least 1024", o.MaxLineBytes))
	}
	if o.Jitter < 0 || o.Jitter > 1 {
		errs = append(errs, fmt.Errorf("jitter %g: must be within 0..1", o.Jitter))
	}
	if o.Limits.MaxConcurrency < 1 || o.Limits.MaxConcurrency > AbsoluteMaxConcurrency {
		errs = append(errs, fmt.Errorf("max concurrency %d: must be within 1..%d", o.Limits.MaxConcurrency, AbsoluteMaxConcurrency))
	}
	if o.Limits.MaxPerMinute < 1 || o.Limits.MaxPerMinute > AbsoluteMaxPerMinute {
		errs = append(errs, fmt.Errorf("max requests per minute %d: must be within 1..%d", o.Limits.MaxPerMinute, AbsoluteMaxPerMinute))
	}
	if o.Concurrency < 1 || o.Concurrency > o.Limits.MaxConcurrency {
		errs = append(errs, fmt.Errorf("concurrency %d exceeds the ceiling %d (raise the max concurrency limit deliberately)", o.Concurrency, o.Limits.MaxConcurrency))
	}
	if o.API != "" && !knownAPI(o.API) {
		errs = append(errs, fmt.Errorf("unknown API %q (known: %v)", o.API, APIs()))
	}
	return errors.Join(errs...)
}

func knownAPI(a API) bool {
	for _, k := range APIs() {
		if k == a {
			return true
		}
	}
	return false
}
