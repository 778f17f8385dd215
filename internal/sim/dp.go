package sim

// Data-parallel ranks (ModelSpec.DPRanks): a model served by several
// engines of its own, as vLLM --data-parallel-size runs them, each
// labelled with its rank on /metrics.

// pickRank is the rank of e's model a new request goes to: the least
// loaded (waiting × 4 + running, the score of vLLM's DP load balancer),
// ties taken in turn so requests one at a time spread over the ranks.
func (e *engine) pickRank() *engine {
	if len(e.ranks) < 2 {
		return e
	}
	n := len(e.ranks)
	start := int(e.turn.Add(1) % uint64(n))
	best, bestScore := e.ranks[start], int64(-1)
	for i := range n {
		r := e.ranks[(start+i)%n]
		score := r.nWaiting.Load()*4 + r.nRunning.Load()
		if bestScore < 0 || score < bestScore {
			best, bestScore = r, score
		}
	}
	return best
}
