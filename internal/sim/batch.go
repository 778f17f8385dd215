package sim

// admit first reserves the blocks that decoding sequences grow into this
// step, preempting the newest ones if the KV pool would overflow, then
// moves waiting requests into the batch while there is a slot and room for
// their prompt (above a 1% watermark, as vLLM keeps).
func (e *engine) admit(stepStart int64) {
	free := int64(e.totalBlocks) - e.usedBlocks.Load()
	// A kv_pressure event holds part of the pool: take it from (or give
	// it back to) the free blocks, so used blocks and preemptions show it.
	hold := int64(float64(e.totalBlocks) * (1 - e.fx.kvFactor))
	free -= hold - e.reserved
	e.reserved = hold
	needsBlock := func(s *seq) bool {
		return s.prefilled >= s.needPrefill && blocksFor(s.prompt+s.generated+1) > s.blocks
	}
	grow := int64(0)
	for _, s := range e.running {
		if needsBlock(s) {
			grow++
		}
	}
	for grow > free && len(e.running) > 1 {
		v := e.running[len(e.running)-1]
		e.running = e.running[:len(e.running)-1]
		free += int64(v.blocks)
		if needsBlock(v) {
			grow--
		}
		e.preempt(v)
	}
	for _, s := range e.running {
		if needsBlock(s) {
			s.blocks++
			free--
		}
	}

	watermark := int64(e.totalBlocks / 100)
	e.mu.Lock()
	for i := 0; i < len(e.waiting) && len(e.running) < e.spec.MaxBatch; {
		s := e.waiting[i]
		if s.arrival > stepStart {
			break // arrived after this step began (a coarse engine catching up)
		}
		if s.kvReady > stepStart {
			i++ // its KV is still in flight: passed over, as vLLM does
			continue
		}
		remote := s.remoteKV && s.scheduled == 0
		tokens := s.needPrefill
		if remote {
			tokens = s.prompt // arrived by transfer, held from now on
		}
		need := int64(blocksFor(tokens + 1))
		// An empty batch always takes the head, so an oversized request
		// cannot wedge the queue.
		if free-need < watermark && len(e.running) > 0 {
			break
		}
		e.waiting = append(e.waiting[:i], e.waiting[i+1:]...)
		free -= need
		s.blocks = int(need)
		s.state.Store(int32(stateRunning))
		if remote {
			e.rec.kvReceived(s, e.spec.KVBytesPerToken)
		} else {
			e.lookupPrefix(s)
		}
		if s.scheduled == 0 {
			s.scheduled = max(stepStart, s.arrival)
		}
		e.running = append(e.running, s)
	}
	if len(e.waiting) == 0 {
		e.waiting = nil // drop the consumed backing array
	}
	e.countDeferred(stepStart)
	e.noteAdapters()
	e.nWaiting.Store(int64(len(e.waiting)))
	e.mu.Unlock()
	e.usedBlocks.Store(int64(e.totalBlocks) - free)
	e.nRunning.Store(int64(len(e.running)))
}

// preempt returns a sequence to the front of the queue; like vLLM V1's
// recompute preemption it must prefill prompt + generated tokens again.
func (e *engine) preempt(s *seq) {
	s.blocks, s.prefilled = 0, 0
	s.needPrefill = s.prompt + s.generated
	s.preemptNum++
	e.rec.preemptions++
	e.evictIdlePrefixes()
	e.mu.Lock()
	s.state.Store(int32(stateWaiting))
	e.waiting = append([]*seq{s}, e.waiting...)
	e.nWaiting.Store(int64(len(e.waiting)))
	e.mu.Unlock()
}

// plan decides this step's work (decodes first, then prefill chunks within
// the token budget, as vLLM's chunked-prefill scheduler does) and returns
// its duration from the engine model (ModelSpec.stepSeconds).
func (e *engine) plan(fx effects) (dur int64, activeNs, memBusyNs, bytes float64) {
	e.emit, e.chunks = e.emit[:0], e.chunks[:0]
	budget := e.spec.MaxBatchedTokens
	kvTokens, prefillTokens := 0, 0
	for _, s := range e.running {
		if s.prefilled >= s.needPrefill {
			e.emit = append(e.emit, s)
			budget--
			kvTokens += s.prompt + s.generated
		}
	}
	decodes := len(e.emit)
	for _, s := range e.running {
		if s.prefilled >= s.needPrefill {
			continue
		}
		n := min(s.needPrefill-s.prefilled, budget)
		kvTokens += s.prefilled + max(n, 0)
		if n <= 0 {
			continue
		}
		budget -= n
		prefillTokens += n
		e.chunks = append(e.chunks, chunk{s, n})
		if s.prefilled+n >= s.needPrefill {
			e.emit = append(e.emit, s)
		}
	}
	e.rec.iterTokens = decodes + prefillTokens

	peak := e.gpu.PeakBW * float64(e.spec.NumGPUs)
	bytes = e.spec.weightBytes() + float64(kvTokens)*e.spec.KVBytesPerToken
	memTime, step := e.spec.stepSeconds(e.gpu, decodes, decodes+len(e.chunks), kvTokens, prefillTokens, fx)
	if e.spec.Jitter > 0 {
		j := max(min(e.rng.NormFloat64(), 3), -3) * e.spec.Jitter
		step *= 1 + j
	}
	dur = max(int64(step*1e9), 1000)
	return dur, bytes / peak * 1e9, min(memTime*1e9, float64(dur)), bytes
}
