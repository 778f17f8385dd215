package probe

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
)

// goodputSignals are the per-request latencies a goodput bound can judge,
// in display order.
var goodputSignals = []telemetry.Signal{telemetry.TTFT, telemetry.TTFA, telemetry.TPOT, telemetry.E2E}

// Bounds are per-request latency bounds in seconds, by signal: a request is
// good when it meets every one (vLLM bench's --goodput, DistServe).
type Bounds map[telemetry.Signal]float64

// BoundsFor returns the latency bounds the objectives set on endpoint: the
// threshold of every percentile and ratio objective on TTFT, TTFA, TPOT or
// E2E that applies to it, the strictest where several do.
func BoundsFor(objs []slo.Objective, endpoint string) Bounds {
	b := Bounds{}
	for _, o := range objs {
		if (o.Kind != slo.Percentile && o.Kind != slo.Ratio) || !slices.Contains(goodputSignals, o.Signal) ||
			!o.Matches(endpoint) || !(o.Threshold > 0) {
			continue
		}
		if v, ok := b[o.Signal]; !ok || o.Threshold < v {
			b[o.Signal] = o.Threshold
		}
	}
	return b
}

// String names the bounds, e.g. "TTFT ≤ 5s, TPOT ≤ 50ms".
func (b Bounds) String() string {
	var parts []string
	for _, sig := range goodputSignals {
		if v, ok := b[sig]; ok {
			parts = append(parts, sig.Info().Title+" ≤ "+slo.FormatValue(sig, v))
		}
	}
	return strings.Join(parts, ", ")
}

// Good reports whether a request met every bound. A failed request is not
// good; a TPOT that is undefined (one output token) meets its bound (there
// was no decode to be slow), a missing TTFA does not (no answer came).
func (b Bounds) Good(r *telemetry.ProbeRecord) bool {
	if !r.OK {
		return false
	}
	for sig, limit := range b {
		var v float64
		switch sig {
		case telemetry.TTFT:
			v = r.TTFTms
		case telemetry.TTFA:
			if r.TTFAms <= 0 {
				return false
			}
			v = r.TTFAms
		case telemetry.TPOT:
			v = r.TPOTms
		case telemetry.E2E:
			v = r.E2Ems
		default:
			continue
		}
		if v/1000 > limit {
			return false
		}
	}
	return true
}

// Goodput is the share of requests meeting every latency bound and the
// rate of their output tokens over the run (good tokens/s).
type Goodput struct {
	Endpoint string `json:"endpoint,omitempty"`
	// Bounds in milliseconds by signal name.
	BoundsMS map[telemetry.Signal]float64 `json:"bounds_ms"`
	Requests int                          `json:"requests"`
	Good     int                          `json:"good_requests"`
	// Share is Good / Requests (failed requests count, as not good).
	Share                float64 `json:"share"`
	GoodOutputTokens     int     `json:"good_output_tokens"`
	GoodOutputThroughput float64 `json:"good_output_throughput"` // tokens/s over the run
	RequestGoodput       float64 `json:"request_goodput"`        // good requests/s (vLLM's request_goodput)
	// DurationMS is the run's wall time, as every JSON duration: in ms.
	DurationMS float64 `json:"duration_ms"`
	// DurationS is the same in seconds, for Go callers; not in the JSON.
	DurationS float64 `json:"-"`
	// EstimatedCounts: good requests whose token count is estimated.
	EstimatedCounts int `json:"estimated_token_counts,omitempty"`
	bounds          Bounds
}

// GoodputOf judges records against bounds over a run that lasted duration.
// Nil when there are no bounds or no requests: nothing to judge.
func GoodputOf(records []telemetry.ProbeRecord, b Bounds, duration time.Duration) *Goodput {
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
		if g := GoodputOf(run.records, BoundsFor(s.objs, name), run.end.Sub(run.start)); g != nil {
			g.Endpoint = name
			out = append(out, *g)
		}
	}
	return out
}
