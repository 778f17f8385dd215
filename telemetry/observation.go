package telemetry

import (
	"encoding/json"
	"time"
)

// Kind says what an Observation carries.
type Kind string

const (
	// KindEndpoint announces or updates an endpoint (Observation.Info).
	KindEndpoint Kind = "endpoint"
	// KindSample is one raw measurement of a distribution signal (a probe's
	// TTFT) or one reading of a gauge (running requests), in base units.
	KindSample Kind = "sample"
	// KindHistogram carries cumulative bucket increments since the previous
	// scrape (Observation.Buckets), in base units; Value is the sum delta.
	KindHistogram Kind = "histogram"
	// KindNoData says the source answered but had nothing for the signal.
	KindNoData Kind = "no_data"
	// KindFailure says a probe/scrape/query failed. With an empty Signal it
	// applies to every signal of the endpoint last fed by the same source.
	KindFailure Kind = "failure"
	// KindProbe carries a finished probe request (Observation.Probe).
	KindProbe Kind = "probe"
	// KindLiveText carries the streaming text of the current probe.
	KindLiveText Kind = "live_text"
	// KindSource reports a source's health (Observation.SourceStatus).
	KindSource Kind = "source"
	// KindRetire says the endpoint is gone (Err: why): a placeholder for a
	// server whose models were unknown, now replaced by them. Views drop
	// it; its alerts end. With no Endpoint it withdraws the source
	// status named Source (a restarted source's crash report).
	KindRetire Kind = "retire"
)

// Observation is the one thing sources emit. Recording writes them as JSON
// lines; replay feeds them back unchanged.
type Observation struct {
	Kind     Kind      `json:"kind"`
	At       time.Time `json:"at"`
	Endpoint string    `json:"endpoint,omitempty"`
	Signal   Signal    `json:"signal,omitempty"`
	// Source names where it came from: "<kind>:<url>", kind one of probe,
	// scrape, promql, dcgm, nvidia-smi, sim.
	Source string  `json:"source,omitempty"`
	Value  float64 `json:"value,omitempty"`
	// Interval is how often the source refreshes; it decides staleness
	// (a History histogram's is its window; a History sample's the live one).
	Interval time.Duration `json:"interval,omitempty"`
	// Approx marks a value estimated rather than measured (e.g. token count
	// from events, or a threshold interpolated inside a bucket).
	Approx  bool          `json:"approx,omitempty"`
	Err     string        `json:"error,omitempty"`
	Buckets []Bucket      `json:"buckets,omitempty"`
	Info    *Endpoint     `json:"info,omitempty"`
	Probe   *ProbeRecord  `json:"probe,omitempty"`
	Live    *LiveText     `json:"live,omitempty"`
	Status  *SourceStatus `json:"status,omitempty"`
	GPU     *GPUDevice    `json:"gpu,omitempty"`

	// History marks a backfilled value from before the source's live data
	// (PromQL range queries over the viewed window): it fills windows and
	// charts but never the current value, state or staleness.
	History bool `json:"history,omitempty"`
	// SeriesAge, when set, says that Value was taken over a series younger
	// than its rate window: it covers only this much time. A counter's
	// rate then reads low (Prometheus' rate() divides by the whole
	// window); a ratio does not (ReadsLowWhenYoung decides).
	SeriesAge time.Duration `json:"series_age,omitempty"`
	// RateWindow, on a rate or ratio of counters, is the span it is taken
	// over: a PromQL source's rate() window, the span a direct scrape's
	// sliding window of scrapes covers. Zero: the figure is not a rate, or is over
	// the viewed window.
	RateWindow time.Duration `json:"rate_window,omitempty"`
	// Share, on a GPU power sample, says the GPUs measured also serve
	// other endpoints (several models on one host): the power is theirs
	// together, and energy per token divides it by all their output
	// tokens.
	Share *GPUShare `json:"share,omitempty"`
}

// Sink receives observations. Implementations must be safe for concurrent
// use and must not block for long: sources call it from their loops.
type Sink interface {
	Observe(Observation)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Observation)

// Observe calls f(o).
func (f SinkFunc) Observe(o Observation) { f(o) }

// Tee fans observations out to several sinks in order.
type Tee []Sink

// Observe passes o to every sink.
func (t Tee) Observe(o Observation) {
	for _, s := range t {
		s.Observe(o)
	}
}

// ProbeRecord is the summary of one probe request, kept for the detail view
// ("last N probes") and recordings. Durations in milliseconds, as printed.
type ProbeRecord struct {
	OK             bool      `json:"ok"`
	ErrorKind      string    `json:"error_kind,omitempty"`
	Error          string    `json:"error,omitempty"`
	Status         int       `json:"status,omitempty"`
	TTFTms         float64   `json:"ttft_ms,omitempty"`
	TPOTms         float64   `json:"tpot_ms,omitempty"`
	E2Ems          float64   `json:"e2el_ms,omitempty"`
	OutputTokens   int       `json:"output_tokens,omitempty"`
	TokensSource   string    `json:"output_tokens_source,omitempty"`
	ITLms          []float64 `json:"itl_ms,omitempty"`
	TokensPerEvent []int     `json:"tokens_per_event,omitempty"`
	// Reasoning streams: time to the first answer token and to the first
	// tool-call token; reasoning and answer tokens (nil when the stream
	// neither showed nor counted reasoning) and each phase's TPOT. A
	// PhaseTokensSource of "events" marks the counts as estimates.
	TTFAms            float64 `json:"ttfa_ms,omitempty"`
	FirstToolCallms   float64 `json:"first_tool_call_ms,omitempty"`
	ReasoningTokens   *int    `json:"reasoning_tokens,omitempty"`
	AnswerTokens      *int    `json:"answer_tokens,omitempty"`
	PhaseTokensSource string  `json:"phase_tokens_source,omitempty"`
	ReasoningTPOTms   float64 `json:"reasoning_tpot_ms,omitempty"`
	AnswerTPOTms      float64 `json:"answer_tpot_ms,omitempty"`
	// Breakdown is where the request's time went, client timings joined
	// with what the engine reported, each part with its source.
	Breakdown []ProbePart `json:"breakdown,omitempty"`
}

// ProbePart is one part of a probe request's time, in milliseconds.
// Source says who measured it: "client", "server: <engine> <field>", or
// "derived: <formula>" (which may be negative when the engine's clock
// counts more than the client saw).
type ProbePart struct {
	Part   string  `json:"part"`
	MS     float64 `json:"ms"`
	Source string  `json:"source"`
}

// LiveText is the text streamed so far by an endpoint's current probe.
type LiveText struct {
	Text   string  `json:"text"`
	Tokens int     `json:"tokens"`
	TPS    float64 `json:"tps"`
	Done   bool    `json:"done"`
}

// SourceStatus is the health of one source, shown in the header so the
// monitor itself is monitored.
type SourceStatus struct {
	Name        string        `json:"name"`
	Kind        SourceKind    `json:"kind"`
	URL         string        `json:"url"`
	State       State         `json:"state"`
	Err         string        `json:"error,omitempty"`
	LastOK      time.Time     `json:"last_ok,omitzero"`
	Failures    int           `json:"consecutive_failures,omitempty"`
	Latency     time.Duration `json:"-"`
	Warnings    []string      `json:"warnings,omitempty"`
	Recognised  []string      `json:"recognised,omitempty"`
	Description string        `json:"description,omitempty"`
}

// Troubled reports whether the source fails, is stale or carries a
// warning: what the problems screen lists.
func (s SourceStatus) Troubled() bool {
	return s.State == Error || s.State == Stale || len(s.Warnings) > 0
}

// MarshalJSON writes the latency in milliseconds, as every other duration
// ttftop prints.
func (s SourceStatus) MarshalJSON() ([]byte, error) {
	type plain SourceStatus
	return json.Marshal(struct {
		plain
		LatencyMS float64 `json:"latency_ms,omitempty"`
	}{plain(s), float64(s.Latency) / float64(time.Millisecond)})
}

// UnmarshalJSON reads what MarshalJSON writes (recordings).
func (s *SourceStatus) UnmarshalJSON(b []byte) error {
	type plain SourceStatus
	var v struct {
		plain
		LatencyMS float64 `json:"latency_ms"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = SourceStatus(v.plain)
	s.Latency = time.Duration(v.LatencyMS * float64(time.Millisecond))
	return nil
}
