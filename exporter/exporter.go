package exporter

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Defaults for Options.
const (
	// DefaultProbeInterval is what /healthz expects between probe results
	// when neither Options nor the observations give an interval, and
	// DefaultProbeTimeout the longest a probe runs when Options give
	// none: the probes' own defaults (sources/probe, which a view does
	// not import; internal/config's defaults test holds them equal).
	DefaultProbeInterval = 10 * time.Second
	DefaultProbeTimeout  = 60 * time.Second
	// DefaultMaxEndpoints caps the endpoint label. Each endpoint costs 122
	// probe series (five histograms) and 6 per SLO alert, so 1000
	// endpoints with the default objectives are about 135k series, which
	// one Prometheus handles without trouble.
	DefaultMaxEndpoints = 1000
	// DefaultMaxErrorKinds caps error_kind values; the probe's own error
	// kinds are a short fixed list, so more means something is wrong.
	DefaultMaxErrorKinds = 32
	// OtherErrorKind replaces error kinds past the cap.
	OtherErrorKind = "other"
	// maxLabelBytes truncates label values: endpoint names are sanitised by
	// their source, but a long one must not bloat every series.
	maxLabelBytes = 256
)

// AlertSource is what the SLO collector reads at scrape time; slo.Engine
// satisfies it.
type AlertSource interface {
	// Current returns every objective on every endpoint, inactive
	// included, so healthy objectives have series too.
	Current() []slo.Alert
	// Objectives returns the objectives in use, completed and scaled:
	// their burn windows decide when the error budget is exported.
	Objectives() []slo.Objective
}

// Options configures an Exporter. The zero value is usable.
type Options struct {
	// ProbeInterval is the expected time between probe results, for
	// /healthz. Zero: the largest Interval seen on probe observations, else
	// DefaultProbeInterval.
	ProbeInterval time.Duration
	// ProbeTimeout is the longest a probe may run (the probes' request
	// timeout, which also bounds their stall timeout), for /healthz: a
	// probe of a hung target reports its failure only then. Zero:
	// DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MaxEndpoints caps distinct endpoint label values; observations of
	// further endpoints are dropped and counted. Zero: DefaultMaxEndpoints.
	MaxEndpoints int
	// MaxErrorKinds caps distinct error_kind values; further kinds are
	// reported as OtherErrorKind. Zero: DefaultMaxErrorKinds.
	MaxErrorKinds int
	// Alerts, when set, is read at every scrape for the ttftop_slo_*
	// metrics.
	Alerts AlertSource
	// Diagnosis, when set, is read at every scrape for the
	// ttftop_diagnosis_* metrics.
	Diagnosis DiagnosisSource
	// Now is the clock for /healthz; nil means time.Now.
	Now func() time.Time
	// NoProbes says the exporter runs no probes (only --prometheus or
	// --dcgm sources, for the SLO metrics): /healthz then judges those
	// sources' reports instead of waiting for probe results that never
	// come.
	NoProbes bool
}

// Exporter is a telemetry.Sink that keeps probe results as Prometheus
// metrics on its own registry. It is safe for concurrent use.
type Exporter struct {
	opts    Options
	reg     *prometheus.Registry
	started time.Time
	ttftB   []float64
	itlB    []float64
	e2eB    []float64

	mu         sync.Mutex
	endpoints  map[string]*endpointState
	errorKinds map[string]struct{}
	dropped    uint64    // observations dropped by the endpoint cap
	lastProbe  time.Time // receipt time (Now) of the last probe result
	interval   time.Duration
	sources    map[string]*sourceHealth // non-probe sources, for /healthz
}

// endpointState is what the exporter knows of one endpoint.
type endpointState struct {
	model string
	// exported: announced by a probe source or probed. Series exist at
	// zero from the announcement on, so rate() counts the first probe
	// (a series born at 1 loses that increment) and "no result yet" reads
	// as zero requests, not as a missing series.
	exported  bool
	hasResult bool      // success and last-result gauges need a result
	created   time.Time // when exported, for OpenMetrics _created
	ttft      hist
	ttfa      hist
	tpot      hist
	itl       hist
	e2e       hist
	tokens    float64
	results   map[resultKey]uint64
	success   float64 // last probe: 1 or 0
	// judged: the monitor judges this endpoint's probes against latency
	// objectives (telemetry.Goodput samples); good counts those met.
	judged bool
	good   uint64
	lastAt time.Time // observation time of the last probe result
}

type resultKey struct {
	result    string // "success" or "failure"
	errorKind string
}

// New returns an exporter with a private registry holding its collectors,
// the Go runtime and process collectors (so the exporter's own CPU and
// memory are visible) and nothing from the global default registry.
func New(opts Options) *Exporter {
	if opts.MaxEndpoints <= 0 {
		opts.MaxEndpoints = DefaultMaxEndpoints
	}
	if opts.MaxErrorKinds <= 0 {
		opts.MaxErrorKinds = DefaultMaxErrorKinds
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	e := &Exporter{
		opts:       opts,
		reg:        prometheus.NewRegistry(),
		started:    opts.Now(),
		ttftB:      TTFTBuckets(),
		itlB:       ITLBuckets(),
		e2eB:       E2EBuckets(),
		endpoints:  map[string]*endpointState{},
		errorKinds: map[string]struct{}{},
		sources:    map[string]*sourceHealth{},
	}
	// The collectors are fixed and their descriptors distinct, so
	// registration can only fail on a programming error: MustRegister.
	e.reg.MustRegister(
		newProbeCollector(e),
		newSLOCollector(opts.Alerts),
		newDiagnosisCollector(opts.Diagnosis),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return e
}

// Registry returns the exporter's private registry, e.g. to add the
// metrics of the process embedding it.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Observe ingests one observation. Only probe sources feed the probe
// metrics; endpoint announcements from any source give the model label.
func (e *Exporter) Observe(o telemetry.Observation) {
	switch o.Kind {
	case telemetry.KindEndpoint:
		if o.Info == nil || o.Endpoint == "" {
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		ep := e.endpoint(o.Endpoint)
		if ep == nil {
			return
		}
		if o.Info.Model != "" {
			ep.model = cleanLabel(o.Info.Model)
		}
		if isProbeSource(o.Source) {
			e.export(ep)
		}
	case telemetry.KindProbe:
		if o.Probe == nil || o.Endpoint == "" || !isProbeSource(o.Source) {
			return
		}
		e.observeProbe(o)
	case telemetry.KindSource:
		e.observeSource(o)
	case telemetry.KindSample:
		if o.Signal == telemetry.Goodput && o.Endpoint != "" && isProbeSource(o.Source) {
			e.observeGoodput(o)
		}
	}
}

// isProbeSource reports whether the observation comes from ttftop's own
// probe ("probe:<url>"); PromQL or scrape sources describe other clients'
// requests and must not be re-exported as ttftop's measurements.
func isProbeSource(source string) bool {
	return telemetry.SourceKindOf(source) == telemetry.SourceProbe
}

// observeGoodput counts a probe judged good (1) or not (0).
func (e *Exporter) observeGoodput(o telemetry.Observation) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ep := e.endpoint(o.Endpoint)
	if ep == nil {
		return
	}
	ep.judged = true
	if o.Value == 1 {
		ep.good++
	}
}

// observeProbe takes latencies from the finished-probe record rather than
// from the per-signal samples the probe also emits for the TUI: one record
// is one request, so histogram counts and requests_total agree exactly and
// nothing is counted twice.
func (e *Exporter) observeProbe(o telemetry.Observation) {
	p := o.Probe
	now := e.opts.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	ep := e.endpoint(o.Endpoint)
	if ep == nil {
		return
	}
	e.lastProbe = now
	if o.Interval > e.interval {
		e.interval = o.Interval
	}
	e.export(ep)
	ep.hasResult = true
	if o.At.After(ep.lastAt) {
		ep.lastAt = o.At
	}
	if !p.OK {
		ep.success = 0
		ep.results[resultKey{"failure", e.errorKind(p.ErrorKind)}]++
		return
	}
	ep.success = 1
	ep.results[resultKey{"success", ""}]++
	// A latency the probe could not define (TPOT with one token) is
	// absent, reported as 0: observing it would invent a sample.
	ep.ttft.observePositive(p.TTFTms / 1000)
	ep.ttfa.observePositive(p.TTFAms / 1000)
	ep.tpot.observePositive(p.TPOTms / 1000)
	ep.e2e.observePositive(p.E2Ems / 1000)
	for _, gap := range p.ITLms {
		ep.itl.observeNonNegative(gap / 1000)
	}
	if p.OutputTokens > 0 {
		ep.tokens += float64(p.OutputTokens)
	}
}

// export starts exporting ep. Call with e.mu held.
func (e *Exporter) export(ep *endpointState) {
	if !ep.exported {
		ep.exported, ep.created = true, e.opts.Now()
	}
}

// endpoint returns the state of name, creating it unless the cap is
// reached (then it counts a drop and returns nil). Call with e.mu held.
func (e *Exporter) endpoint(name string) *endpointState {
	name = cleanLabel(name)
	if ep, ok := e.endpoints[name]; ok {
		return ep
	}
	if len(e.endpoints) >= e.opts.MaxEndpoints {
		e.dropped++
		return nil
	}
	ep := &endpointState{
		ttft:    newHist(e.ttftB),
		ttfa:    newHist(e.ttftB),
		tpot:    newHist(e.itlB),
		itl:     newHist(e.itlB),
		e2e:     newHist(e.e2eB),
		results: map[resultKey]uint64{},
	}
	e.endpoints[name] = ep
	return ep
}

// errorKind folds kinds past the cap into OtherErrorKind. Call with e.mu
// held.
func (e *Exporter) errorKind(kind string) string {
	kind = cleanLabel(kind)
	if kind == "" {
		kind = "unknown"
	}
	if _, ok := e.errorKinds[kind]; ok {
		return kind
	}
	if len(e.errorKinds) >= e.opts.MaxErrorKinds {
		return OtherErrorKind
	}
	e.errorKinds[kind] = struct{}{}
	return kind
}

// cleanLabel makes s a valid, bounded label value: client_golang rejects
// invalid UTF-8 at scrape time, which would fail every scrape.
func cleanLabel(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return sanitize.Head(s, maxLabelBytes)
}

// hist is a fixed-bucket histogram kept as plain counts under the
// exporter's lock; the collector turns it into a const histogram.
type hist struct {
	bounds []float64 // shared, read-only
	counts []uint64  // per bucket, not cumulative; last = +Inf
	sum    float64
	count  uint64
}

func newHist(bounds []float64) hist {
	return hist{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *hist) observePositive(v float64) {
	if v > 0 {
		h.observeNonNegative(v)
	}
}

// observeNonNegative records v; a 0 s inter-token gap is real (two events
// read in one packet), a negative or non-finite one is not.
func (h *hist) observeNonNegative(v float64) {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	// Buckets are few (≤ 22): a linear scan beats binary search here.
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.count++
}

// cumulative returns Prometheus's le → cumulative count form.
func (h *hist) cumulative() map[float64]uint64 {
	out := make(map[float64]uint64, len(h.bounds))
	var acc uint64
	for i, b := range h.bounds {
		acc += h.counts[i]
		out[b] = acc
	}
	return out
}

func (h hist) clone() hist {
	h.counts = append([]uint64(nil), h.counts...)
	return h
}
