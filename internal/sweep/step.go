package sweep

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// Step is one concurrency level, measured by the client. Latencies are
// p95s in milliseconds; null where the step had no sample.
type Step struct {
	Concurrency         int      `json:"concurrency"`
	Requests            int      `json:"requests"` // judged (after the warm-up wave)
	Failed              int      `json:"failed"`
	DurationMS          float64  `json:"duration_ms"`
	AchievedConcurrency *float64 `json:"achieved_concurrency"`
	TTFTp95ms           *float64 `json:"ttft_p95_ms"`
	TTFAp95ms           *float64 `json:"ttfa_p95_ms"`
	TPOTp95ms           *float64 `json:"tpot_p95_ms"`
	E2Ep95ms            *float64 `json:"e2e_p95_ms"`
	OutputTPS           *float64 `json:"output_tokens_per_s"`
	// Goodput is the share of judged requests meeting every latency bound;
	// null without bounds. GoodOutputTPS is their output tokens/s.
	Goodput       *float64 `json:"goodput_ratio"`
	GoodOutputTPS *float64 `json:"good_output_tokens_per_s"`
	// Throttled: fewer than 90 % of Concurrency in flight on average;
	// HeldBackBy says what held the starts back.
	BelowConcurrency bool        `json:"throttled"`
	HeldBackBy       Holder      `json:"held_back_by,omitempty"`
	Stable           bool        `json:"stable"`
	End              string      `json:"end"` // why the step ended: stable, max step time, saturating, interrupted
	Objectives       []Judgement `json:"objectives"`
	// MeetsObjectives: every objective was judged and met.
	MeetsObjectives bool `json:"meets_objectives"`
	// Saturating: TTFT rose with time within the step.
	Saturating bool `json:"saturating,omitempty"`

	// tpot are the judged requests' TPOTs in seconds: where a trigger on
	// the engine's histogram can tell the knee's load from others.
	tpot []float64
}

// stepRun measures one step.
type stepRun struct {
	cfg    Config
	c      int
	bounds slo.Bounds
	objs   []slo.Objective
	done   []Step // earlier steps, for progress

	mu         sync.Mutex
	start      time.Time
	all        []*probe.Result // every result but cancelled ones
	judged     []*probe.Result
	cutAt      time.Time // earliest start of a cancelled request
	lastCheck  int
	lastTTFT   *float64
	lastTPOT   *float64
	stable     bool
	saturating bool
}

func (m *stepRun) measure(ctx context.Context, opts probe.Options) (Step, error) {
	p, err := probe.New(opts)
	if err != nil {
		return Step{}, err
	}
	defer p.Close()
	sctx, cancel := context.WithTimeout(ctx, m.cfg.MaxStepTime)
	defer cancel()
	m.start = time.Now()
	p.DoScheduled(sctx, 0, func(r *probe.Result) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if r.ErrorKind == probe.ErrCanceled {
			if m.cutAt.IsZero() || r.Start.Before(m.cutAt) {
				m.cutAt = r.Start
			}
			return
		}
		m.all = append(m.all, r)
		if r.Seq <= m.c {
			return // the warm-up wave
		}
		m.judged = append(m.judged, r)
		if m.stable || m.saturating || len(m.judged)-m.lastCheck < max(m.c, 5) {
			return
		}
		m.lastCheck = len(m.judged)
		m.check()
		if m.stable || m.saturating {
			cancel()
		}
		if m.cfg.Progress != nil {
			cur := m.step("measuring")
			m.cfg.Progress(Progress{Steps: m.done, Current: &cur})
		}
	})
	end := "max step time"
	switch {
	case m.stable:
		end = "stable"
	case m.saturating:
		end = "saturating"
	case ctx.Err() != nil:
		end = "interrupted"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.step(end), nil
}

// check decides whether the step is stable or saturating (mu held).
func (m *stepRun) check() {
	ttft := quantileMS(m.judged, 0.95, ttftOf)
	tpot := quantileMS(m.judged, 0.95, tpotOf)
	enough := len(m.judged) >= max(m.cfg.MinRequests, 2*m.c)
	m.stable = enough && ttft != nil && settled(m.lastTTFT, ttft, m.cfg.Tolerance) && settled(m.lastTPOT, tpot, m.cfg.Tolerance)
	m.lastTTFT, m.lastTPOT = ttft, tpot
	m.saturating = enough && ttftRising(m.judged) && m.throughputFlat()
}

// throughputFlat: output tokens/s in the second half of the window so far
// is at most 10 % above the first half's (mu held).
func (m *stepRun) throughputFlat() bool {
	w0, w1, ok := m.window()
	if !ok {
		return false
	}
	mid := w0.Add(w1.Sub(w0) / 2)
	first, second := tokensWithin(m.all, w0, mid), tokensWithin(m.all, mid, w1)
	return second <= 1.1*first
}

// settled: both missing, or both present and within tol of each other.
func settled(prev, cur *float64, tol float64) bool {
	if prev == nil || cur == nil {
		return prev == nil && cur == nil
	}
	return math.Abs(*cur-*prev) <= tol*math.Max(*prev, 1e-9)
}

// step builds the step's figures from what arrived (mu held).
func (m *stepRun) step(end string) Step {
	st := Step{Concurrency: m.c, Requests: len(m.judged), DurationMS: float64(time.Since(m.start)) / float64(time.Millisecond),
		Stable: end == "stable", End: end, Saturating: m.saturating}
	for _, r := range m.judged {
		if !r.OK {
			st.Failed++
		}
	}
	st.TTFTp95ms = quantileMS(m.judged, 0.95, ttftOf)
	st.TTFAp95ms = quantileMS(m.judged, 0.95, ttfaOf)
	st.TPOTp95ms = quantileMS(m.judged, 0.95, tpotOf)
	st.tpot = samples(m.judged, tpotOf)
	st.E2Ep95ms = quantileMS(m.judged, 0.95, e2eOf)
	w0, w1, ok := m.window()
	if ok {
		span := w1.Sub(w0)
		tps := tokensWithin(m.all, w0, w1) / span.Seconds()
		st.OutputTPS = &tps
		inflight := busyWithin(m.all, w0, w1) / span.Seconds()
		st.AchievedConcurrency = &inflight
		st.BelowConcurrency = st.Throttled()
		if st.BelowConcurrency {
			st.HeldBackBy = m.heldBackBy(w0, w1)
		}
		if g := probe.GoodputOf(records(m.judged), m.bounds, span); g != nil {
			st.Goodput, st.GoodOutputTPS = &g.Share, &g.GoodOutputThroughput
		}
	}
	st.Objectives = judge(m.objs, m.judged)
	st.MeetsObjectives = len(st.Objectives) > 0
	for _, j := range st.Objectives {
		st.MeetsObjectives = st.MeetsObjectives && j.Met != nil && *j.Met
	}
	return st
}

// window is the measuring window: from the first judged start to the
// earliest start of a cancelled request or the last completion, so every
// request in flight within it is one whose tokens arrived.
func (m *stepRun) window() (time.Time, time.Time, bool) {
	if len(m.judged) == 0 {
		return time.Time{}, time.Time{}, false
	}
	w0 := m.judged[0].Start
	var w1 time.Time
	for _, r := range m.judged {
		if r.Start.Before(w0) {
			w0 = r.Start
		}
	}
	for _, r := range m.all {
		if end := r.Start.Add(r.Duration); end.After(w1) {
			w1 = end
		}
	}
	if !m.cutAt.IsZero() && m.cutAt.Before(w1) {
		w1 = m.cutAt
	}
	return w0, w1, w1.Sub(w0) > 0
}

// tokensWithin counts output tokens that arrived in [w0, w1]; an event's
// tokens are its own count when known, else n shared evenly.
func tokensWithin(results []*probe.Result, w0, w1 time.Time) float64 {
	total := 0.0
	for _, r := range results {
		if !r.OK || len(r.EventOffsets) == 0 {
			continue
		}
		perEvent := len(r.TokensPerEvent) == len(r.EventOffsets)
		even := float64(r.OutputTokens) / float64(len(r.EventOffsets))
		for i, off := range r.EventOffsets {
			at := r.Start.Add(off)
			if at.Before(w0) || at.After(w1) {
				continue
			}
			if perEvent {
				total += float64(r.TokensPerEvent[i])
			} else {
				total += even
			}
		}
	}
	return total
}

// busyWithin sums the time requests were in flight within [w0, w1];
// cancelled requests were in flight from cutAt at the latest, which lies
// at or after w1, so they add nothing.
func busyWithin(results []*probe.Result, w0, w1 time.Time) float64 {
	busy := 0.0
	for _, r := range results {
		s, e := r.Start, r.Start.Add(r.Duration)
		if s.Before(w0) {
			s = w0
		}
		if e.After(w1) {
			e = w1
		}
		if e.After(s) {
			busy += e.Sub(s).Seconds()
		}
	}
	return busy
}

func records(results []*probe.Result) []telemetry.ProbeRecord {
	out := make([]telemetry.ProbeRecord, len(results))
	for i, r := range results {
		out[i] = r.Record()
	}
	return out
}

func ttftOf(r *probe.Result) (time.Duration, bool) { return r.TTFT, r.OK }
func e2eOf(r *probe.Result) (time.Duration, bool)  { return r.E2E, r.OK }
func tpotOf(r *probe.Result) (time.Duration, bool) { return r.TPOT() }
func ttfaOf(r *probe.Result) (time.Duration, bool) {
	ph := r.Phases()
	return ph.TTFA, r.OK && ph.HasAnswer
}

// samples are the values of a per-request figure, in seconds.
func samples(results []*probe.Result, of func(*probe.Result) (time.Duration, bool)) []float64 {
	var v []float64
	for _, r := range results {
		if d, ok := of(r); ok {
			v = append(v, d.Seconds())
		}
	}
	return v
}

// quantileMS is the exact q-quantile in milliseconds; nil without samples.
func quantileMS(results []*probe.Result, q float64, of func(*probe.Result) (time.Duration, bool)) *float64 {
	v := samples(results, of)
	if len(v) == 0 {
		return nil
	}
	x := telemetry.SampleQuantile(q, v) * 1000
	return &x
}

// ttftRising: TTFT grows with the request's start time within the step,
// significantly (t > 4) and by at least its median and 50 ms over the
// span: a queue building up, not the jitter of prefills landing in
// decode steps (which moves TTFT by a few milliseconds either way).
func ttftRising(results []*probe.Result) bool {
	var xs, ys []float64
	for _, r := range results {
		if r.OK {
			xs = append(xs, r.Start.Sub(results[0].Start).Seconds())
			ys = append(ys, r.TTFT.Seconds())
		}
	}
	n := float64(len(xs))
	if n < 10 {
		return false
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return false
	}
	slope := sxy / sxx
	var sse float64
	for i := range xs {
		e := ys[i] - (my + slope*(xs[i]-mx))
		sse += e * e
	}
	se := math.Sqrt(sse / (n - 2) / sxx)
	span := slices.Max(xs) - slices.Min(xs)
	median := telemetry.SampleQuantile(0.5, ys)
	rise := slope * span
	return slope > 0 && (se == 0 || slope/se > 4) && rise >= median && rise >= 0.050
}
