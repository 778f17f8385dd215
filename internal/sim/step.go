package sim

import "runtime"

// complete applies the step at its deadline. Tokens go out first, in a
// tight loop, and the goroutine yields so the woken consumers run before
// the step's bookkeeping, which nobody is waiting for. Requests that end
// in this step are accounted before their last token leaves, so a client
// that has seen [DONE] always finds itself in /metrics.
func (e *engine) complete(deadline int64) {
	for _, c := range e.chunks {
		c.s.prefilled += c.n
	}
	r := &e.rec
	ending := false
	for i, s := range e.emit {
		if s.aborted.Load() {
			e.emit[i] = nil // its client left; reap() accounts for it
			continue
		}
		s.extra = e.speculate(s)
		if s.generated+1+s.extra >= s.target {
			e.account(r, s, deadline)
			ending = true
		}
	}
	if ending {
		e.dropDone()
		e.metrics.apply(r)
		r.reset()
	}
	for _, s := range e.emit {
		if s != nil {
			finish := ""
			if seqState(s.state.Load()) == stateDone {
				finish = s.finishAt
			}
			s.deliver(deadline, 1+s.extra, finish)
		}
	}
	runtime.Gosched()
	for _, s := range e.emit {
		if s != nil && seqState(s.state.Load()) != stateDone {
			e.account(r, s, deadline)
		}
	}
	e.metrics.apply(r)
	r.reset()
}

// account books one emitted token: counters, TTFT or ITL, and the
// request's end when it reached its target length.
func (e *engine) account(r *stepRecord, s *seq, deadline int64) {
	s.generated += 1 + s.extra
	r.genTokens += 1 + s.extra
	if s.firstTok == 0 {
		s.firstTok = deadline
		r.promptTokens += s.prompt
		r.ttft = append(r.ttft, secs(deadline-s.arrival))
	} else {
		r.itl = append(r.itl, secs(deadline-s.lastTok))
	}
	s.lastTok = deadline
	s.needPrefill = s.prompt + s.generated // context to recompute if preempted
	s.prefilled = s.needPrefill
	if s.generated >= s.target {
		e.finish(r, s, s.finishAt, deadline)
	}
}

// finish records a completed (or aborted) running request.
func (e *engine) finish(r *stepRecord, s *seq, reason string, end int64) {
	s.state.Store(int32(stateDone))
	f := finishedReq{reason: reason, prompt: s.prompt, generated: s.generated, paramMax: s.paramMax,
		e2e: secs(end - s.arrival), queue: secs(s.scheduled - s.arrival), inference: secs(end - s.scheduled),
		hasSchedule: true}
	if s.firstTok != 0 {
		f.prefill = secs(s.firstTok - s.scheduled)
		f.decode = secs(end - s.firstTok)
		if s.generated > 1 {
			f.tpot = f.decode / float64(s.generated-1)
		}
	}
	r.finished = append(r.finished, f)
}

// reap removes aborted sequences from the batch immediately.
func (e *engine) reap() {
	aborted := false
	for _, s := range e.running {
		if s.aborted.Load() && seqState(s.state.Load()) != stateDone {
			e.finish(&e.side, s, finishAbort, e.srv.now())
			s.fail(ErrAborted)
			aborted = true
		}
	}
	if aborted {
		e.dropDone()
		e.metrics.apply(&e.side)
		e.side.reset()
	}
}

// dropDone compacts the batch and returns finished sequences' KV blocks.
func (e *engine) dropDone() {
	kept := e.running[:0]
	freed := 0
	for _, s := range e.running {
		if seqState(s.state.Load()) == stateDone {
			freed += s.blocks
			s.blocks = 0
			continue
		}
		kept = append(kept, s)
	}
	clear(e.running[len(kept):])
	e.running = kept
	e.usedBlocks.Add(-int64(freed))
	e.nRunning.Store(int64(len(e.running)))
}
