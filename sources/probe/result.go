package probe

import (
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Result is one probe request, successful or not. Durations are offsets
// from Start on the monotonic clock. A failed Result (OK false) keeps its
// counts for diagnosis but no latencies: failures never become samples.
type Result struct {
	Seq      int
	Start    time.Time     // just before the request was written; carries a monotonic reading
	Duration time.Duration // start until the stream ended or the request failed
	OK       bool

	ErrorKind  ErrorKind
	Err        string        // sanitised, credentials scrubbed
	Status     int           // HTTP status, 0 when none arrived
	RetryAfter time.Duration // from a 429/503 Retry-After header

	TTFT time.Duration
	E2E  time.Duration
	// EventOffsets are the arrival times of the token-bearing events.
	EventOffsets []time.Duration
	// TokensPerEvent, aligned with EventOffsets, when known: from the
	// format (llama.cpp tokens, TGI), per-chunk cumulative usage, or n
	// equal to the event count. Nil when unknown.
	TokensPerEvent []int
	// EventParts, aligned with EventOffsets, says what each event carried
	// (reasoning, answer, tool call); see Phases.
	EventParts []Part
	Events     int // token-bearing events
	// ReasoningReported is the server's count of reasoning tokens, when
	// HasReasoningReported (usage details; SGLang's usage.reasoning_tokens).
	ReasoningReported    int
	HasReasoningReported bool
	OutputTokens         int // n
	TokensSource         TokenSource
	PromptTokens         int

	DNS, Connect, TLS time.Duration // zero when the connection was reused
	TTFB              time.Duration // response headers − start
	Reused            bool          // connection came from the pool
	Proto             string        // HTTP/1.1, HTTP/2.0
	Model             string        // as named by the stream, sanitised
	RequestID         string        // X-Request-Id, sanitised

	Ollama   *OllamaTimings   // server-side durations (Ollama)
	LlamaCpp *LlamaCppTimings // server-side timings (llama.cpp)
	VLLM     *VLLMMetrics     // per-request metrics (vLLM --enable-per-request-metrics)
	Warnings []string
}

// Approx reports that n is an estimate (counted events, not a server count).
func (r *Result) Approx() bool { return r.TokensSource == TokensEvents }

// decodeSpan is E2E − TTFT when TPOT is defined: n > 1 and at least two
// token-bearing events (one multi-token event has no decode span).
func (r *Result) decodeSpan() (time.Duration, bool) {
	if !r.OK || r.OutputTokens < 2 || r.Events < 2 || r.E2E <= r.TTFT {
		return 0, false
	}
	return r.E2E - r.TTFT, true
}

// TPOT is (E2E − TTFT)/(n − 1); ok is false where it is undefined.
func (r *Result) TPOT() (time.Duration, bool) {
	span, ok := r.decodeSpan()
	if !ok {
		return 0, false
	}
	return span / time.Duration(r.OutputTokens-1), true
}

// DecodeTPS is (n − 1)/(E2E − TTFT) in tokens per second.
func (r *Result) DecodeTPS() (float64, bool) {
	span, ok := r.decodeSpan()
	if !ok {
		return 0, false
	}
	return float64(r.OutputTokens-1) / span.Seconds(), true
}

// ITL returns the gaps between consecutive token-bearing events.
func (r *Result) ITL() []time.Duration {
	if !r.OK || len(r.EventOffsets) < 2 {
		return nil
	}
	gaps := make([]time.Duration, len(r.EventOffsets)-1)
	for i := range gaps {
		gaps[i] = r.EventOffsets[i+1] - r.EventOffsets[i]
	}
	return gaps
}

// Record converts the result for telemetry (milliseconds, as printed).
func (r *Result) Record() telemetry.ProbeRecord {
	rec := telemetry.ProbeRecord{
		OK:             r.OK,
		ErrorKind:      string(r.ErrorKind),
		Error:          r.Err,
		Status:         r.Status,
		OutputTokens:   r.OutputTokens,
		TokensSource:   string(r.TokensSource),
		TokensPerEvent: r.TokensPerEvent,
	}
	if !r.OK {
		return rec
	}
	rec.TTFTms, rec.E2Ems = ms(r.TTFT), ms(r.E2E)
	if tpot, ok := r.TPOT(); ok {
		rec.TPOTms = ms(tpot)
	}
	for _, g := range r.ITL() {
		rec.ITLms = append(rec.ITLms, ms(g))
	}
	ph := r.Phases()
	if ph.HasAnswer {
		rec.TTFAms = ms(ph.TTFA)
	}
	if ph.HasTool {
		rec.FirstToolCallms = ms(ph.FirstTool)
	}
	if ph.Split {
		rec.ReasoningTokens, rec.AnswerTokens = &ph.Reasoning, &ph.Answer
		rec.PhaseTokensSource = string(ph.TokensSource)
	}
	if ph.HasReasoningTPOT {
		rec.ReasoningTPOTms = ms(ph.ReasoningTPOT)
	}
	if ph.HasAnswerTPOT {
		rec.AnswerTPOTms = ms(ph.AnswerTPOT)
	}
	rec.Breakdown = r.Breakdown()
	return rec
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
