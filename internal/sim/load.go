package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// loadGen runs the background client streams of Config.Load and scenario
// bursts. Each stream is a goroutine that submits a request straight to the
// engine (no HTTP), waits for it to finish, thinks, and repeats; its
// requests occupy batch slots and metrics exactly like HTTP ones.
type loadGen struct {
	srv     *Server
	running []atomic.Int64 // live workers per engine
	started atomic.Uint64  // seeds each worker's RNG
}

func newLoadGen(s *Server) *loadGen {
	return &loadGen{srv: s, running: make([]atomic.Int64, len(s.engines))}
}

// supervise adjusts the number of workers per model every 100 ms to
// Load + active burst streams. Workers above the target retire after
// their current request.
func (l *loadGen) supervise(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		for i, e := range l.srv.engines {
			if e.rank > 0 {
				continue // a model's streams go through rank 0's balancer
			}
			target := int64(l.srv.cfg.Load + l.srv.effects(e.spec.Name).burst)
			for {
				n := l.running[i].Load()
				if n >= target {
					break
				}
				if l.running[i].CompareAndSwap(n, n+1) {
					l.srv.wg.Add(1)
					go func() {
						defer l.srv.wg.Done()
						l.worker(ctx, i, e)
					}()
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// retire decrements the worker count if it exceeds the current target.
func (l *loadGen) retire(i int, e *engine) bool {
	target := int64(l.srv.cfg.Load + l.srv.effects(e.spec.Name).burst)
	for {
		n := l.running[i].Load()
		if n <= target {
			return false
		}
		if l.running[i].CompareAndSwap(n, n-1) {
			return true
		}
	}
}

func (l *loadGen) worker(ctx context.Context, i int, e *engine) {
	retired := false
	defer func() {
		if !retired {
			l.running[i].Add(-1)
		}
	}()
	rng := rand.New(rand.NewPCG(uint64(l.srv.cfg.Seed), l.started.Add(1)<<8|uint64(i)))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sleep := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		}
	}
	// Stagger the first request so N streams do not arrive in lockstep.
	if !sleep(time.Duration(rng.Float64() * float64(500*time.Millisecond))) {
		return
	}
	for ctx.Err() == nil {
		if retired = l.retire(i, e); retired {
			return
		}
		limit := e.spec.MaxModelLen
		prompt := int(math.Round(300 * math.Exp(0.8*rng.NormFloat64())))
		prompt = min(max(prompt, 16), limit/4)
		req := Request{PromptTokens: prompt}
		if share := l.srv.cfg.SharedPrefixShare; share > 0 && rng.Float64() < share {
			req.PrefixKey, req.PrefixTokens = systemPrompt(rng)
			req.PromptTokens = min(prompt+req.PrefixTokens, limit/2)
		}
		req.MaxTokens = min(64+rng.IntN(449), limit-req.PromptTokens)
		rank := e.pickRank()
		s, err := rank.newSeq(req)
		if err == nil {
			s.internal = true
			err = rank.submit(s)
		}
		if err != nil {
			// Queue full or outage: back off like a polite client.
			if !sleep(500 * time.Millisecond) {
				return
			}
			continue
		}
		for done := false; !done; {
			select {
			case <-ctx.Done():
				return // the engine fails the request on shutdown
			case <-s.notify:
				s.mu.Lock()
				done = s.finish != ""
				s.mu.Unlock()
			}
		}
		think := time.Duration(rng.ExpFloat64() * float64(250*time.Millisecond))
		if !sleep(min(think, 2*time.Second)) {
			return
		}
	}
}

// systemPrompt picks one of four shared system prompts (128 to 1024
// tokens) that background requests start with.
func systemPrompt(rng *rand.Rand) (key uint64, tokens int) {
	i := rng.IntN(4)
	return 0x5157e3 + uint64(i), 128 << i
}
