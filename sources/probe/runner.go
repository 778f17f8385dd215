package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// Live text limits: the dashboard shows the tail of the current answer.
const (
	liveTextMax      = 2048
	liveTextInterval = 100 * time.Millisecond // ≤ 10 updates a second
)

// Runner probes one endpoint on its schedule and feeds ttftop: an
// endpoint announcement, samples per successful probe, failures, probe
// records, live text and the source's own health.
type Runner struct {
	opts   Options
	prober *Prober
	sink   telemetry.Sink
	source string

	liveBusy atomic.Bool // one probe at a time streams live text

	mu       sync.Mutex
	endpoint telemetry.Endpoint
	failures int
	lastOK   time.Time
}

// NewRunner prepares a Runner; Interval defaults to DefaultInterval and
// Jitter to DefaultJitter (a Runner never probes back to back).
func NewRunner(opts Options, sink telemetry.Sink) (*Runner, error) {
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Jitter == 0 {
		opts.Jitter = DefaultJitter
	}
	p, err := New(opts)
	if err != nil {
		return nil, err
	}
	return &Runner{opts: p.opts, prober: p, sink: sink, source: telemetry.SourceProbe.At(p.URL())}, nil
}

// Observations is what a Runner emits for one result, all dated at: for a
// success, latency samples (TTFT, TTFA, TPOT, E2E, output TPS, each ITL gap) and
// probe_success 1; for a failure, whose latencies are meaningless,
// probe_success 0 and a failure at the same instant (so the SLO engine
// counts one bad event); then the probe record.
func Observations(res *Result, endpoint, source string, interval time.Duration, at time.Time) []telemetry.Observation {
	obs := func(kind telemetry.Kind, sig telemetry.Signal, v float64) telemetry.Observation {
		return telemetry.Observation{Kind: kind, At: at, Endpoint: endpoint, Signal: sig, Source: source,
			Value: v, Interval: interval}
	}
	var out []telemetry.Observation
	if res.OK {
		out = append(out, obs(telemetry.KindSample, telemetry.TTFT, res.TTFT.Seconds()))
		// A stream that only reasoned (cut by max_tokens) has no answer:
		// no TTFA sample, rather than one that is not a time to answer.
		if ph := res.Phases(); ph.HasAnswer {
			out = append(out, obs(telemetry.KindSample, telemetry.TTFA, ph.TTFA.Seconds()))
		}
		// Only the figures divided by n inherit an estimated n.
		if tpot, ok := res.TPOT(); ok {
			o := obs(telemetry.KindSample, telemetry.TPOT, tpot.Seconds())
			o.Approx = res.Approx()
			out = append(out, o)
		}
		out = append(out, obs(telemetry.KindSample, telemetry.E2E, res.E2E.Seconds()))
		if tps, ok := res.DecodeTPS(); ok {
			o := obs(telemetry.KindSample, telemetry.OutputTPS, tps)
			o.Approx = res.Approx()
			out = append(out, o)
		}
		for _, g := range res.ITL() {
			out = append(out, obs(telemetry.KindSample, telemetry.ITL, g.Seconds()))
		}
		out = append(out, obs(telemetry.KindSample, telemetry.ProbeSuccess, 1))
	} else {
		f := obs(telemetry.KindFailure, "", 0)
		f.Err = string(res.ErrorKind) + ": " + res.Err
		out = append(out, obs(telemetry.KindSample, telemetry.ProbeSuccess, 0), f)
	}
	rec := res.Record()
	p := obs(telemetry.KindProbe, "", 0)
	p.Probe = &rec
	return append(out, p)
}

// DiscoveryFailure is what a failed model discovery emits for the server
// named endpoint (its models unknown, so it stands for all of them): the
// endpoint, a failed probe (probe_success 0, the failure) and its record,
// so a server that is dead from the start is an outage that alerts, not
// silence.
func DiscoveryFailure(err error, ep telemetry.Endpoint, source string, interval time.Duration, at time.Time) []telemetry.Observation {
	kind, msg := ErrConnect, sanitize.Text(err.Error())
	var pe *probeError
	if errors.As(err, &pe) {
		kind, msg = pe.kind, pe.msg
	}
	res := &Result{ErrorKind: kind, Err: msg}
	info := ep
	return append([]telemetry.Observation{{Kind: telemetry.KindEndpoint, At: at, Endpoint: ep.Name, Source: source,
		Interval: interval, Info: &info}}, Observations(res, ep.Name, source, interval, at)...)
}

// Measure sends n requests to one endpoint, one after the other, and feeds
// sink what a Runner emits for them (no live text, no source status): the
// endpoint, then Observations per result. With prefix set the endpoint is
// named "<prefix>/<model>", as Monitor.AddProbe names it. It returns an
// error only when it could not measure at all (bad options, discovery
// failed, ctx done); failed requests are data, not errors.
func Measure(ctx context.Context, opts Options, prefix string, n int, sink telemetry.Sink) error {
	p, err := New(opts)
	if err != nil {
		return err
	}
	defer p.Close()
	dctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	_, err = p.Discover(dctx)
	cancel()
	if err != nil {
		return err
	}
	ep := p.Endpoint()
	if prefix != "" {
		ep.Name = prefix + "/" + p.Model()
	}
	source := telemetry.SourceProbe.At(p.URL())
	sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: time.Now(), Endpoint: ep.Name, Source: source, Info: &ep})
	for range n {
		res := p.Do(ctx, nil)
		if res.ErrorKind == ErrCanceled || ctx.Err() != nil {
			return ctx.Err()
		}
		for _, o := range Observations(res, ep.Name, source, 0, time.Now()) {
			sink.Observe(o)
		}
	}
	return nil
}

// Source is the Observation.Source of everything the Runner emits.
func (r *Runner) Source() string { return r.source }

// Run probes until ctx is done. It returns nil on cancellation; it never
// gives up on an unreachable endpoint, it reports it.
func (r *Runner) Run(ctx context.Context) error {
	defer r.prober.Close()
	for {
		dctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		_, err := r.prober.Discover(dctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		r.emitStatus(telemetry.Error, sanitize.Text(err.Error()), 0, nil)
		if !sleep(ctx, r.opts.Interval) {
			return nil
		}
	}
	r.mu.Lock()
	r.endpoint = r.prober.Endpoint()
	ep := r.endpoint
	r.mu.Unlock()
	r.sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: time.Now(), Endpoint: ep.Name,
		Source: r.source, Interval: r.opts.Interval, Info: &ep})
	r.emitStatus(telemetry.Unknown, "", 0, nil)

	s := newSchedule(r.opts, 0)
	s.run(ctx, r.probeOnce, r.report)
	return nil
}

func (r *Runner) probeOnce(ctx context.Context, seq int) *Result {
	if r.opts.Prewarm {
		// Best effort: a failure here shows up in the probe itself.
		_ = r.prober.Prewarm(ctx, 1)
	}
	var lt *liveText
	if r.liveBusy.CompareAndSwap(false, true) {
		defer r.liveBusy.Store(false)
		lt = &liveText{r: r}
	}
	var progress func(Progress)
	if lt != nil {
		progress = lt.update
	}
	res := r.prober.Do(ctx, progress)
	res.Seq = seq
	if lt != nil {
		lt.finish(res)
	}
	return res
}

// report turns a result into observations and the source's status.
func (r *Runner) report(res *Result) {
	if res.ErrorKind == ErrCanceled {
		return // shutdown, not the endpoint's fault
	}
	now := time.Now()
	for _, o := range Observations(res, r.endpointName(), r.source, r.opts.Interval, now) {
		r.sink.Observe(o)
	}

	r.mu.Lock()
	if res.OK {
		r.failures, r.lastOK = 0, now
	} else {
		r.failures++
	}
	r.mu.Unlock()
	state, msg := telemetry.Live, ""
	if !res.OK {
		state, msg = telemetry.Error, string(res.ErrorKind)+": "+res.Err
	}
	r.emitStatus(state, msg, res.Duration, res.Warnings)
}

func (r *Runner) endpointName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.endpoint.Name == "" {
		return r.prober.Endpoint().Name
	}
	return r.endpoint.Name
}

func (r *Runner) emitStatus(state telemetry.State, msg string, latency time.Duration, warnings []string) {
	r.mu.Lock()
	st := telemetry.SourceStatus{
		Name: r.endpoint.Name, Kind: telemetry.SourceProbe, URL: r.prober.URL(), State: state, Err: msg,
		LastOK: r.lastOK, Failures: r.failures, Latency: latency,
		Description: "synthetic streaming requests (" + string(r.prober.API()) + ")",
	}
	r.mu.Unlock()
	if st.Name == "" {
		st.Name = r.prober.Endpoint().Name
	}
	if r.opts.Auth.Insecure {
		st.Warnings = append(st.Warnings, "TLS NOT VERIFIED")
	}
	for _, w := range warnings {
		if !slices.Contains(st.Warnings, w) {
			st.Warnings = append(st.Warnings, w)
		}
	}
	// No interval: a probe reports as each one ends, and a stream may
	// outlast any multiple of the interval; the probe's figures carry
	// their own staleness.
	r.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: time.Now(), Endpoint: st.Name,
		Source: r.source, Status: &st})
}

// liveText streams the current answer to the dashboard, throttled.
type liveText struct {
	r      *Runner
	text   []byte // sanitised; the tail of the answer
	tokens int
	tps    float64
	last   time.Time
}

func (l *liveText) update(p Progress) {
	// Sanitised once, here, where the streamed text enters.
	l.text = append(l.text, sanitize.Multiline(p.Fragment, 0)...)
	if over := len(l.text) - liveTextMax; over > 0 {
		// Cut on a rune boundary.
		for over < len(l.text) && l.text[over]&0xC0 == 0x80 {
			over++
		}
		l.text = l.text[over:]
	}
	l.tokens = p.Tokens
	if span := p.At - p.TTFT; span > 0 && p.Tokens > 1 {
		l.tps = float64(p.Tokens-1) / span.Seconds()
	}
	if now := time.Now(); now.Sub(l.last) >= liveTextInterval {
		l.last = now
		l.emit(false)
	}
}

func (l *liveText) finish(res *Result) {
	if res.OK {
		l.tokens = res.OutputTokens
		if tps, ok := res.DecodeTPS(); ok {
			l.tps = tps
		}
	}
	l.emit(true)
}

func (l *liveText) emit(done bool) {
	l.r.sink.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, At: time.Now(), Endpoint: l.r.endpointName(),
		Source: l.r.source, Interval: l.r.opts.Interval,
		Live: &telemetry.LiveText{Text: string(l.text), Tokens: l.tokens, TPS: l.tps, Done: done}})
}

// Format prints only the source name, never the options it holds.
func (r *Runner) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "probe.Runner("+r.source+")")
}
