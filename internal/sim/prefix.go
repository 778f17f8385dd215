package sim

// maxCachedPrefixes bounds the prefix cache: a handful of system prompts
// and repeated probe prompts, not every prompt ever seen.
const maxCachedPrefixes = 64

// lookupPrefix books a request's prefix-cache lookup as it is scheduled,
// as vLLM's prefix_cache_queries/hits count tokens: a first admission
// queries its whole prompt and finds the full blocks of its shared prefix
// if a previous request left them (never the last prompt token, which
// must be computed to sample from); those tokens need no prefill. A
// preempted request recomputes everything.
func (e *engine) lookupPrefix(s *seq) {
	if !e.srv.cfg.PrefixCaching {
		return
	}
	if s.scheduled != 0 {
		e.rec.prefixQueries += s.needPrefill - s.prefilled
		return
	}
	e.rec.prefixQueries += s.prompt
	if s.prefixTokens <= 0 || e.fx.prefixMiss {
		return
	}
	full := s.prefixTokens / blockSize * blockSize
	if hit := min(e.prefixes[s.prefixKey], full, (s.prompt-1)/blockSize*blockSize); hit > 0 {
		e.rec.prefixHits += hit
		s.prefilled = max(s.prefilled, hit)
	}
	if _, ok := e.prefixes[s.prefixKey]; !ok && len(e.prefixes) >= maxCachedPrefixes {
		clear(e.prefixes) // crude eviction; the common prefixes return at once
	}
	e.prefixes[s.prefixKey] = max(e.prefixes[s.prefixKey], full)
}

// evictIdlePrefixes runs when the KV pool is exhausted (a preemption):
// vLLM has by then evicted every cached block no running request holds,
// so only prefixes of running sequences stay cached.
func (e *engine) evictIdlePrefixes() {
	if len(e.prefixes) == 0 {
		return
	}
	held := make(map[uint64]bool, len(e.running))
	for _, s := range e.running {
		if s.prefixTokens > 0 {
			held[s.prefixKey] = true
		}
	}
	for k := range e.prefixes {
		if !held[k] {
			delete(e.prefixes, k)
		}
	}
}
