package sim

// speculate drafts SpecTokens tokens for a decoding sequence and returns
// how many of them the target model accepts this step: each with
// probability SpecAcceptRate while the previous ones were accepted, capped
// so the request never exceeds its length. It books vLLM's spec_decode
// counters; a sequence emitting its first token (prefill) drafts nothing.
func (e *engine) speculate(s *seq) int {
	k := e.spec.SpecTokens
	if k <= 0 || s.firstTok == 0 {
		return 0
	}
	accepted := 0
	for accepted < k && e.rng.Float64() < e.spec.SpecAcceptRate*e.fx.acceptFactor {
		accepted++
	}
	accepted = min(accepted, max(s.target-s.generated-1, 0))
	r := &e.rec
	r.specDrafts++
	r.specDraftTokens += k
	r.specAccepted += accepted
	if len(r.specPerPos) < k {
		r.specPerPos = append(r.specPerPos, make([]int, k-len(r.specPerPos))...)
	}
	for i := range accepted {
		r.specPerPos[i]++
	}
	return accepted
}
