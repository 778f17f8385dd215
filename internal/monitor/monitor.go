// Package monitor assembles a running ttftop: it starts the configured
// sources, fans their observations out to the telemetry store, the SLO
// engine and any extra sinks (recorder, exporter), evaluates the SLOs on a
// tick and hands alert transitions to notifiers. Commands build one and the
// views read its Store and SLO engine; views never see a concrete source.
package monitor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// Options tune a Monitor; the zero value is usable.
type Options struct {
	Store      telemetry.StoreConfig
	Objectives []slo.Objective
	SLO        slo.Options
	// EvalEvery is the SLO evaluation period (default 1 s).
	EvalEvery time.Duration
	// Now is the clock for evaluation (tests); nil = time.Now.
	Now func() time.Time
	// Diagnosis tunes the diagnosis made at every evaluation.
	Diagnosis diagnosis.Config
}

// Monitor runs sources into the store and the SLO engine.
type Monitor struct {
	Store *telemetry.Store
	SLO   *slo.Engine
	// Diagnosis says why each endpoint is unwell, as of the last
	// evaluation (docs/diagnosis.md).
	Diagnosis *diagnosis.Diagnoser

	opts Options

	mu          sync.Mutex
	sinks       telemetry.Tee
	goodput     *goodputJudge
	runners     []runner
	transitions []func([]slo.Transition)
	closers     []func() error           // run when Run returns (recorders)
	recordings  []string                 // files AddRecorder writes
	gpus        gpuJoin                  // probed endpoints without a GPU map, for dcgm
	probed      map[string]probe.Options // each probed endpoint's options, by name (ProbedAs)
	followers   []windowFollower
	running     bool
	left        map[string]string           // pods that left, by namespace/name: their watch's source (podwatch.go)
	notReady    map[string]bool             // pods not ready, by namespace/name: their probes' outcomes not counted (podwatch.go)
	endpoints   map[string]*endpointSources // each endpoint prefix's loops (endpoints.go)
	runCtx      context.Context             // Run's, while it runs: loops added then start at once
	stopping    bool                        // Run is waiting for its loops: none starts any more
	loops       sync.WaitGroup              // the endpoints' loops Run waits for
}

// windowFollower is a source that loads history for the window on screen
// (PromQL backfills it with range queries).
type windowFollower interface {
	WindowChanged(window time.Duration)
}

// ViewWindow tells the sources that follow the viewed window (PromQL)
// which window is on screen, at most the store's longest window, since a
// longer history could not be held. Views call it at start and when the
// user changes the window; it never blocks.
func (m *Monitor) ViewWindow(window time.Duration) {
	window = min(window, m.Store.Config().MaxWindow)
	m.mu.Lock()
	fs := append([]windowFollower(nil), m.followers...)
	m.mu.Unlock()
	for _, f := range fs {
		f.WindowChanged(window)
	}
}

// runner is one source loop; Run returns when ctx is done.
type runner struct {
	name string
	run  func(ctx context.Context) error
}

// New returns a Monitor with its store and SLO engine, and no sources yet.
func New(opts Options) *Monitor {
	if opts.EvalEvery <= 0 {
		opts.EvalEvery = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	store := telemetry.NewStore(opts.Store)
	engine := slo.New(opts.Objectives, store, opts.SLO)
	m := &Monitor{Store: store, SLO: engine, Diagnosis: diagnosis.New(opts.Diagnosis), opts: opts,
		goodput: newGoodputJudge(engine.Objectives())}
	m.sinks = telemetry.Tee{store, engine}
	return m
}

// Observe passes an observation to every sink; sources hold the Monitor
// as their sink.
func (m *Monitor) Observe(o telemetry.Observation) {
	m.mu.Lock()
	sinks, left, excused := m.sinks, m.leftPod(o), m.notReadyProbe(o)
	m.mu.Unlock()
	if left || (excused && probeOutcome(o)) {
		return
	}
	sinks.Observe(o)
	if g, ok := m.goodput.judge(o); ok && !excused {
		sinks.Observe(g)
	}
}

// AddSink adds a sink (a recorder, an exporter) behind the store.
func (m *Monitor) AddSink(s telemetry.Sink) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sinks = append(append(telemetry.Tee{}, m.sinks...), s)
}

// OnTransitions registers a callback for each evaluation's alert
// transitions (notifiers, recorder, the TUI bell). It must not block.
func (m *Monitor) OnTransitions(f func([]slo.Transition)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.transitions = append(m.transitions, f)
}

// add registers a source loop; it must be called before Run.
func (m *Monitor) add(name string, run func(ctx context.Context) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runners = append(m.runners, runner{name: name, run: run})
}

// Sources returns how many source loops are configured.
func (m *Monitor) Sources() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.runners)
	for _, es := range m.endpoints {
		n += len(es.runners)
	}
	return n
}

// Run starts every source and the SLO evaluation, and returns when ctx is
// done and every loop has stopped. A source that fails is reported through
// its status; it never stops the others.
func (m *Monitor) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return errors.New("monitor: already running")
	}
	m.running, m.runCtx = true, ctx
	runners := append([]runner(nil), m.runners...)
	for _, es := range m.endpoints {
		for _, r := range es.runners {
			m.startFor(es, r)
		}
		es.runners = nil
	}
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.runSource(ctx, r)
		}()
	}
	m.evaluate(ctx)
	wg.Wait()
	m.mu.Lock()
	m.stopping = true
	m.mu.Unlock()
	m.loops.Wait()
	m.mu.Lock()
	closers := m.closers
	m.closers = nil
	m.mu.Unlock()
	var errs []error
	for _, c := range closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// runSource runs one source loop until ctx is done; its failure is its
// status.
func (m *Monitor) runSource(ctx context.Context, r runner) {
	if err := m.guarded(ctx, r.name, r.run); err != nil && ctx.Err() == nil {
		m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: time.Now(), Source: r.name,
			Status: &telemetry.SourceStatus{Name: r.name, Kind: "source", State: telemetry.Error, Err: err.Error()}})
	}
}

// evaluate runs the SLO engine every EvalEvery until ctx is done.
func (m *Monitor) evaluate(ctx context.Context) {
	t := time.NewTicker(m.opts.EvalEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.EvaluateNow()
		}
	}
}

// EvaluateNow evaluates the SLOs once, diagnoses every endpoint with the
// new alert states and dispatches the transitions.
func (m *Monitor) EvaluateNow() []slo.Transition {
	now := m.opts.Now()
	trs := m.SLO.Evaluate(now)
	m.Diagnosis.Update(m.Store.Snapshot(now, m.Diagnosis.Window()), m.SLO.Current())
	if len(trs) == 0 {
		return nil
	}
	m.mu.Lock()
	callbacks := append([]func([]slo.Transition){}, m.transitions...)
	m.mu.Unlock()
	for _, f := range callbacks {
		f(trs)
	}
	return trs
}
