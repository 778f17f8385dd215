package probe

import (
	"fmt"
	"sync"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Goodput is the share of requests meeting every latency bound and the
// rate of their output tokens over the run (good tokens/s).
type Goodput struct {
	Endpoint string `json:"endpoint,omitempty"`
	// Bounds in milliseconds by signal name.
	BoundsMS map[telemetry.Signal]float64 `json:"bounds_ms"`
	Requests int                          `json:"requests"`
	Good     int                          `json:"good_requests"`
	// Share is Good / Requests (failed requests count, as not good).
	Share                float64 `json:"good_ratio"`
	GoodOutputTokens     int     `json:"good_output_tokens"`
	GoodOutputThroughput float64 `json:"good_output_tokens_per_s"` // over the run
	RequestGoodput       float64 `json:"good_requests_per_s"`      // vLLM's request_goodput
	// DurationMS is the run's wall time, as every JSON duration: in ms.
	DurationMS float64 `json:"duration_ms"`
	// DurationS is the same in seconds, for Go callers; not in the JSON.
	DurationS float64 `json:"-"`
	// EstimatedCounts: good requests whose token count is estimated.
	EstimatedCounts int `json:"estimated_token_counts,omitempty"`
	bounds          slo.Bounds
}

// GoodputOf judges records against bounds over a run that lasted duration.
// Nil when there are no bounds or no requests: nothing to judge.
func GoodputOf(records []telemetry.ProbeRecord, b slo.Bounds, duration time.Duration) *Goodput {
	if len(b) == 0 || len(records) == 0 {
		return nil
	}
	g := &Goodput{BoundsMS: map[telemetry.Signal]float64{}, Requests: len(records), DurationS: duration.Seconds(),
		DurationMS: float64(duration) / float64(time.Millisecond), bounds: b}
	for sig, v := range b {
		g.BoundsMS[sig] = v * 1000
	}
	for i := range records {
		r := &records[i]
		if !b.Good(r) {
			continue
		}
		g.Good++
		g.GoodOutputTokens += r.OutputTokens
		if r.TokensSource == string(TokensEvents) {
			g.EstimatedCounts++
		}
	}
	g.Share = float64(g.Good) / float64(g.Requests)
	if duration > 0 {
		g.GoodOutputThroughput = float64(g.GoodOutputTokens) / duration.Seconds()
		g.RequestGoodput = float64(g.Good) / duration.Seconds()
	}
	return g
}

// Text is the one-line summary the tables print.
func (g *Goodput) Text() string {
	s := fmt.Sprintf("goodput %.1f%% (%d of %d requests meet %s)  good %.1f tok/s  %.2f good req/s",
		g.Share*100, g.Good, g.Requests, g.bounds, g.GoodOutputThroughput, g.RequestGoodput)
	if g.EstimatedCounts > 0 {
		s += fmt.Sprintf("  (%d good token counts estimated)", g.EstimatedCounts)
	}
	return s
}

// GoodputSink collects finished probes per endpoint (a telemetry.Sink) to
// judge them against objectives afterwards, as `check` does. An endpoint's
// run lasts from its announcement to its last probe.
type GoodputSink struct {
	objs []slo.Objective

	mu        sync.Mutex
	endpoints map[string]*goodputRun
	order     []string
}

type goodputRun struct {
	start, end time.Time
	records    []telemetry.ProbeRecord
}

// NewGoodputSink judges against objs.
func NewGoodputSink(objs []slo.Objective) *GoodputSink {
	return &GoodputSink{objs: objs, endpoints: map[string]*goodputRun{}}
}

// Observe keeps endpoint announcements and probe records.
func (s *GoodputSink) Observe(o telemetry.Observation) {
	if o.Endpoint == "" || (o.Kind != telemetry.KindProbe && o.Kind != telemetry.KindEndpoint) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.endpoints[o.Endpoint]
	if !ok {
		run = &goodputRun{start: o.At}
		s.endpoints[o.Endpoint] = run
		s.order = append(s.order, o.Endpoint)
	}
	if o.Kind == telemetry.KindProbe && o.Probe != nil {
		run.records = append(run.records, *o.Probe)
		run.end = o.At
	}
}

// Results is the goodput of every endpoint that was probed and has
// latency bounds, in the order they were first seen.
func (s *GoodputSink) Results() []Goodput {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Goodput
	for _, name := range s.order {
		run := s.endpoints[name]
		if g := GoodputOf(run.records, slo.BoundsFor(s.objs, name), run.end.Sub(run.start)); g != nil {
			g.Endpoint = name
			out = append(out, *g)
		}
	}
	return out
}
