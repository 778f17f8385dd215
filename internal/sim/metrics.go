package sim

import "sync"

// modelMetrics holds one model's served-traffic statistics, updated by the
// engine goroutine (one lock per step) and read by /metrics.
type modelMetrics struct {
	mu                                   sync.Mutex
	promptTokens, genTokens, preemptions float64
	success                              map[string]float64 // by finished_reason
	engineCounters

	reqPrompt, reqGen, iterTokens, maxGen, paramsN, paramsMaxTokens *histogram
	ttft, itl, tpotReq, e2e, queue, inference, prefill, decode      *histogram
	kv                                                              kvMetrics
}

// firstTokens is how many requests had their first token.
func (m *modelMetrics) firstTokens() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ttft.count
}

func newModelMetrics(format string, maxModelLen int) *modelMetrics {
	tokens := build125Buckets(maxModelLen)
	m := &modelMetrics{
		success:         map[string]float64{finishStop: 0, finishLength: 0, finishAbort: 0},
		reqPrompt:       newHistogram(tokens),
		reqGen:          newHistogram(tokens),
		maxGen:          newHistogram(tokens),
		paramsMaxTokens: newHistogram(tokens),
		iterTokens:      newHistogram(vllmIterationBuckets),
		paramsN:         newHistogram(vllmParamsNBuckets),
		ttft:            newHistogram(vllmTTFTBuckets),
		itl:             newHistogram(vllmITLBuckets),
		tpotReq:         newHistogram(vllmTPOTBuckets()),
		e2e:             newHistogram(vllmE2EBuckets),
		queue:           newHistogram(vllmE2EBuckets),
		inference:       newHistogram(vllmE2EBuckets),
		prefill:         newHistogram(vllmE2EBuckets),
		decode:          newHistogram(vllmE2EBuckets),
		kv:              newKVMetrics(),
	}
	if format == FormatSGLang {
		m.ttft = newHistogram(sglangTTFTBuckets)
		m.itl = newHistogram(sglangTPOTBuckets)
		m.e2e = newHistogram(sglangE2EBuckets)
	}
	return m
}

// stepRecord collects one engine step's observations so the engine takes
// the metrics lock once per step, not once per sequence.
type stepRecord struct {
	iterTokens   int
	promptTokens int
	genTokens    int
	preemptions  int
	// Prefix cache (tokens) and speculative decoding (drafts, tokens).
	prefixQueries, prefixHits                 int
	specDrafts, specDraftTokens, specAccepted int
	specPerPos                                []int // accepted tokens per draft position
	flops, readBytes, writeBytes              float64
	ttft, itl                                 []float64
	finished                                  []finishedReq
	kv                                        kvRecord
}

type finishedReq struct {
	reason                                       string
	prompt, generated, paramMax                  int
	e2e, queue, inference, prefill, decode, tpot float64
	hasSchedule                                  bool // false for requests aborted while waiting
}

func (r *stepRecord) reset() {
	r.iterTokens, r.promptTokens, r.genTokens, r.preemptions = 0, 0, 0, 0
	r.prefixQueries, r.prefixHits = 0, 0
	r.specDrafts, r.specDraftTokens, r.specAccepted = 0, 0, 0
	clear(r.specPerPos)
	r.flops, r.readBytes, r.writeBytes = 0, 0, 0
	r.ttft, r.itl, r.finished = r.ttft[:0], r.itl[:0], r.finished[:0]
	r.kv.reset()
}

func (m *modelMetrics) apply(r *stepRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.iterTokens > 0 {
		m.iterTokens.observe(float64(r.iterTokens))
	}
	m.promptTokens += float64(r.promptTokens)
	m.genTokens += float64(r.genTokens)
	m.preemptions += float64(r.preemptions)
	m.engineCounters.add(r)
	m.kv.add(&r.kv)
	for _, v := range r.ttft {
		m.ttft.observe(v)
	}
	for _, v := range r.itl {
		m.itl.observe(v)
	}
	for _, f := range r.finished {
		m.success[f.reason]++
		m.e2e.observe(f.e2e)
		m.reqPrompt.observe(float64(f.prompt))
		m.reqGen.observe(float64(f.generated))
		m.maxGen.observe(float64(f.paramMax))
		m.paramsMaxTokens.observe(float64(f.paramMax))
		m.paramsN.observe(1)
		if f.hasSchedule {
			m.queue.observe(f.queue)
			m.inference.observe(f.inference)
			m.prefill.observe(f.prefill)
			m.decode.observe(f.decode)
			m.tpotReq.observe(f.tpot)
		}
	}
}

// engineCounters are the counters behind the diagnosis signals: prefix
// cache, speculative decoding and the MFU counters (per GPU).
type engineCounters struct {
	prefixQueries, prefixHits                 float64
	specDrafts, specDraftTokens, specAccepted float64
	specPerPos                                []float64
	flops, readBytes, writeBytes              float64
}

func (c *engineCounters) add(r *stepRecord) {
	c.prefixQueries += float64(r.prefixQueries)
	c.prefixHits += float64(r.prefixHits)
	c.specDrafts += float64(r.specDrafts)
	c.specDraftTokens += float64(r.specDraftTokens)
	c.specAccepted += float64(r.specAccepted)
	for i, n := range r.specPerPos {
		if i >= len(c.specPerPos) {
			c.specPerPos = append(c.specPerPos, 0)
		}
		c.specPerPos[i] += float64(n)
	}
	c.flops += r.flops
	c.readBytes += r.readBytes
	c.writeBytes += r.writeBytes
}

func (c engineCounters) clone() engineCounters {
	c.specPerPos = append([]float64(nil), c.specPerPos...)
	return c
}

// countBytes books one planned step's memory traffic and FLOPs per GPU,
// as vLLM's analytic MFU counters do: bytes is what the step reads
// (weights + resident KV); it writes the KV of the tokens it processes and
// does 2 × parameters FLOPs per token.
func (r *stepRecord) countBytes(m ModelSpec, bytes float64) {
	gpus := float64(max(m.NumGPUs, 1))
	r.readBytes += bytes / gpus
	r.writeBytes += float64(r.iterTokens) * m.KVBytesPerToken / gpus
	r.flops += 2 * m.Params * float64(r.iterTokens) / gpus
}
