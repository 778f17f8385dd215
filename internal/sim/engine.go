package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// engine simulates one model's continuous-batching scheduler on its GPUs.
// A single goroutine (run) owns the running batch and advances a monotonic
// step schedule; handlers only touch the waiting queue under mu.
type engine struct {
	srv         *Server
	idx         int
	spec        ModelSpec
	gpu         GPU
	totalBlocks int
	metrics     *modelMetrics
	win         busyWindow

	mu      sync.Mutex
	waiting []*seq
	closed  bool
	wake    chan struct{}

	// published state, read by /metrics, DCGM and Stats
	nRunning, nWaiting, usedBlocks atomic.Int64
	nDeferred                      atomic.Int64 // waiting for their KV transfer
	outage                         atomic.Bool
	lastStepNs, steps, overruns    atomic.Int64
	lastBWFactor                   atomic.Uint64 // float64 bits
	// recordedTo is the end of the last planned step, or noGap when
	// idle: the busy window is complete up to min(now, recordedTo).
	recordedTo atomic.Int64
	sleeps     atomic.Int64

	// engine goroutine only
	running []*seq
	rng     *rand.Rand
	timer   *time.Timer
	rec     stepRecord // the step in flight
	side    stepRecord // aborts and failures between steps
	emit    []*seq
	chunks  []chunk
	// prefixes is the prefix cache: shared prefix key → cached tokens.
	prefixes map[uint64]int
	// fx are the scenario's effects on this step; reserved the KV blocks
	// a kv_pressure event holds (counted in usedBlocks).
	fx       effects
	reserved int64
	// nextKV is the earliest end of a KV transfer among the waiting
	// requests, 0 when none waits for one.
	nextKV int64
	// lora is the adapters in use as /metrics shows them (lora.go).
	lora atomic.Pointer[loraInUse]
	// rank is the engine's data-parallel rank in its model (0 without
	// data parallelism); ranks, on rank 0, lists all of the model's.
	rank  int
	ranks []*engine
	turn  atomic.Uint64 // rank 0: where the next tie goes
}

type chunk struct {
	s *seq
	n int
}

// maxLag bounds how far the schedule may trail real time before it is
// rebased: a starved process should not "catch up" with a burst of steps
// that a real GPU would never produce.
const maxLag = 20 * time.Millisecond

// coarseLag is how late a CoarseTiming engine may run its steps while no
// HTTP client watches them (see Config.CoarseTiming).
const coarseLag = 50 * time.Millisecond

// noGap marks an idle engine's busy window as complete up to now.
const noGap = math.MaxInt64

// kvBlocksOverride, when > 0, replaces the computed KV pool size (tests).
var kvBlocksOverride int

func newEngine(srv *Server, idx int, spec ModelSpec, gpu GPU) *engine {
	e := &engine{
		srv: srv, idx: idx, spec: spec, gpu: gpu,
		totalBlocks: kvBlocks(spec, gpu),
		metrics:     newModelMetrics(srv.format, spec.MaxModelLen),
		wake:        make(chan struct{}, 1),
		rng:         rand.New(rand.NewPCG(uint64(srv.cfg.Seed), uint64(idx)+1)),
		prefixes:    map[uint64]int{},
		fx:          noEffects(),
	}
	if kvBlocksOverride > 0 {
		e.totalBlocks = kvBlocksOverride
	}
	e.lastBWFactor.Store(math.Float64bits(1))
	e.recordedTo.Store(noGap)
	return e
}

func (e *engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// windowAt is the time to read the busy window at: now, or the end of
// the last planned step when a coarse engine runs behind.
func (e *engine) windowAt(now int64) int64 { return min(now, e.recordedTo.Load()) }

func blocksFor(tokens int) int { return (tokens + blockSize - 1) / blockSize }

// submit queues a request, or refuses it when the queue is full, the model
// is in an outage or the server is closing.
func (e *engine) submit(s *seq) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return ErrClosed
	case e.srv.rankEffects(e).outage:
		return ErrOutage
	case len(e.waiting) >= e.spec.MaxQueue:
		return ErrQueueFull
	}
	s.arrival = e.srv.now()
	s.needPrefill = s.prompt
	if s.remoteKV {
		s.needPrefill, s.kvReady = 0, s.arrival+s.kvTransfer
	}
	e.waiting = append(e.waiting, s)
	e.nWaiting.Store(int64(len(e.waiting)))
	e.signal()
	return nil
}

// abort cancels a request on behalf of a departed client. A waiting
// request leaves the queue here; a running one is reaped by the engine
// goroutine, which wakes at once, so its batch slot and KV blocks are free
// before the next step is planned.
func (e *engine) abort(s *seq) {
	if !s.aborted.CompareAndSwap(false, true) {
		return
	}
	e.mu.Lock()
	if seqState(s.state.Load()) == stateWaiting {
		for i, w := range e.waiting {
			if w == s {
				e.waiting = append(e.waiting[:i], e.waiting[i+1:]...)
				e.nWaiting.Store(int64(len(e.waiting)))
				s.state.Store(int32(stateDone))
				e.mu.Unlock()
				now := e.srv.now()
				e.metrics.apply(&stepRecord{finished: []finishedReq{{
					reason: finishAbort, prompt: s.prompt, generated: s.generated, paramMax: s.paramMax,
					e2e: secs(now - s.arrival),
				}}})
				s.fail(ErrAborted)
				return
			}
		}
	}
	e.mu.Unlock()
	e.signal()
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

// run is the engine loop: plan a step from the current batch, sleep until
// its deadline on the monotonic schedule, then emit one token per
// sequence that finished a decode or its prefill.
func (e *engine) run(ctx context.Context) {
	e.timer = time.NewTimer(time.Hour)
	e.timer.Stop()
	defer e.shutdown()
	var clock int64 // start of the next step on the schedule
	idle := true
	for ctx.Err() == nil {
		e.reap()
		fx := e.srv.rankEffects(e)
		e.fx = fx
		e.lastBWFactor.Store(math.Float64bits(fx.bwFactor))
		if fx.outage {
			e.recordedTo.Store(noGap)
			e.enterOutage()
			e.idleWait(ctx, 50*time.Millisecond)
			idle = true
			continue
		}
		e.outage.Store(false)
		now := e.srv.now()
		if idle {
			clock = now
		} else if now-clock > int64(maxLag) && !e.lagAllowed(now-clock) {
			clock = now
			e.overruns.Add(1)
		}
		e.admit(clock)
		if len(e.running) == 0 {
			idle = true
			e.recordedTo.Store(noGap)
			if e.nWaiting.Load() == 0 {
				e.idleWait(ctx, 0)
			} else if e.nextKV > now {
				e.idleWait(ctx, time.Duration(e.nextKV-now)) // only KV transfers in flight
			} // else requests arrived after clock: admit them at now
			continue
		}
		idle = false
		dur, active, memBusy, bytes := e.plan(fx)
		e.rec.countBytes(e.spec, bytes)
		deadline := clock + dur
		e.win.add(clock, deadline, active, memBusy, bytes, float64(len(e.emit)))
		e.recordedTo.Store(deadline)
		e.lastStepNs.Store(dur)
		if !e.sleepUntil(ctx, deadline) {
			return
		}
		if !e.srv.cfg.CoarseTiming { // a coarse engine is late on purpose
			e.srv.wake.record(time.Duration(e.srv.now() - deadline))
		}
		e.complete(deadline)
		e.steps.Add(1)
		clock = deadline
	}
}

// idleWait blocks until a submission or abort arrives (or poll elapses,
// when >0, so scenario changes are noticed).
func (e *engine) idleWait(ctx context.Context, poll time.Duration) {
	if poll > 0 {
		e.timer.Reset(poll)
		defer e.timer.Stop()
	}
	select {
	case <-e.wake:
	case <-e.timer.C:
	case <-ctx.Done():
	}
}

// enterOutage fails everything in flight, like an engine crash would, and
// refuses new work until the outage ends.
func (e *engine) enterOutage() {
	if e.outage.Swap(true) {
		return
	}
	e.failAll(ErrOutage)
}

func (e *engine) failAll(err error) {
	now := e.srv.now()
	e.mu.Lock()
	waiting := e.waiting
	e.waiting = nil
	e.nWaiting.Store(0)
	e.mu.Unlock()
	for _, s := range e.running {
		e.finish(&e.side, s, finishAbort, now)
		s.fail(err)
	}
	for _, s := range waiting {
		s.state.Store(int32(stateDone))
		e.side.finished = append(e.side.finished, finishedReq{reason: finishAbort, prompt: s.prompt,
			generated: s.generated, paramMax: s.paramMax, e2e: secs(now - s.arrival)})
		s.fail(err)
	}
	e.dropDone()
	e.metrics.apply(&e.side)
	e.side.reset()
}

func (e *engine) shutdown() {
	e.recordedTo.Store(noGap)
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.failAll(ErrClosed)
	e.timer.Stop()
}
