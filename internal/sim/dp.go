package sim

import "fmt"

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

// validateRanks refuses an event for a rank that no model it names has.
func (s *Server) validateRanks() error {
	for i, ev := range s.cfg.Scenario.Events {
		if ev.Rank == nil {
			continue
		}
		found := false
		for _, e := range s.engines {
			found = found || (ev.Model == "" || ev.Model == e.spec.Name) && e.rank == *ev.Rank
		}
		if !found {
			return fmt.Errorf("scenario event %d (%s at %s): no model has rank %d (ModelSpec.DPRanks, sim --dp)", i+1, ev.Kind, ev.At, *ev.Rank)
		}
	}
	return nil
}
