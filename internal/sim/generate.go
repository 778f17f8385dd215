package sim

import (
	"context"
	"math"
	"math/rand/v2"
)

// Stream is an in-process token stream returned by Server.Generate. It is
// the HTTP handlers' view of a request without the HTTP, for embedding and
// benchmarks. Not safe for concurrent use.
type Stream struct {
	stop  func() bool // unregisters the ctx watcher
	srv   *Server
	e     *engine
	s     *seq
	times []int64
	toks  []Token
	ended bool
}

// Token is one generated token.
type Token struct {
	Index     int    // 0-based position in the output (reasoning included)
	Text      string // "" for the EOS token of a natural stop
	Reasoning bool   // part of a reasoning model's thinking phase
}

// reasoningSalt separates the thinking text from the answer's.
const reasoningSalt = 0x7468696e6b

// reasoningLength draws a request's thinking length: log-normal around
// ReasoningTokens (σ 0.5), seeded like the answer so a prompt always
// thinks as long.
func (m ModelSpec) reasoningLength(seed uint64) int {
	if m.ReasoningTokens <= 0 {
		return 0
	}
	r := rand.New(rand.NewPCG(seed, reasoningSalt))
	return max(1, int(math.Round(float64(m.ReasoningTokens)*math.Exp(0.5*r.NormFloat64()))))
}

// tokenAt is token idx of the output: the thinking first, then the answer
// (which starts a sentence of its own).
func (s *seq) tokenAt(idx int) (text string, reasoning bool) {
	if idx < s.reasoning {
		return tokenText(s.textSeed^reasoningSalt, idx), true
	}
	return tokenText(s.textSeed, idx-s.reasoning), false
}

// reasoningOf is how many of n output tokens were thinking.
func (s *seq) reasoningOf(n int) int { return min(n, s.reasoning) }

// Generate submits req to its model's engine; cancelling ctx aborts the
// request (its slot frees at once). It fails with
// ErrUnknownModel, ErrOutage, ErrQueueFull, ErrClosed or a validation
// error (an error whose message is the HTTP 400 text).
func (s *Server) Generate(ctx context.Context, req Request) (*Stream, error) {
	e, err := s.engineFor(req.Model)
	if err != nil {
		return nil, err
	}
	if s.effects(e.spec.Name).outage {
		return nil, ErrOutage
	}
	sq, err := e.newSeq(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.prefillRemotely(ctx, e, sq, req); err != nil {
		return nil, err
	}
	if err := e.submit(sq); err != nil {
		return nil, err
	}
	// The consumer blocks on the sequence's channel alone; cancellation
	// arrives through the engine (abort → fail → notify) rather than a
	// select on ctx.Done, whose shared channel lock every consumer would
	// contend for on each token.
	st := &Stream{srv: s, e: e, s: sq}
	st.stop = context.AfterFunc(ctx, func() { e.abort(sq) })
	return st, nil
}

// Recv blocks until the engine produced tokens and returns all pending
// ones; finish is set ("stop", "length") with the last batch. After the
// end it returns ErrAborted; on failure ErrOutage, ErrClosed or ErrAborted
// (also when Generate's ctx was cancelled). The returned slice is reused
// by the next Recv. Each token's delay behind its step deadline feeds
// ScheduleErrors.
func (st *Stream) Recv() (toks []Token, finish string, err error) {
	if st.ended {
		return nil, "", ErrAborted
	}
	<-st.s.notify
	b := st.s.take(st.times)
	st.times = b.times
	if b.finish != "" {
		st.ended = true
		st.stop()
	}
	toks = st.toks[:0]
	for i := range b.times {
		toks = append(toks, Token{})
		idx := b.first + i
		toks[i] = Token{Index: idx}
		if !(b.err == nil && b.finish == finishStop && i == len(b.times)-1) {
			toks[i].Text, toks[i].Reasoning = st.s.tokenAt(idx)
		}
	}
	st.toks = toks
	st.srv.sched.recordBatch(st.srv.now(), b.times)
	if b.err != nil {
		return toks, "", b.err
	}
	return toks, b.finish, nil
}

// Close aborts the request if it has not finished, freeing its slot.
func (st *Stream) Close() {
	if !st.ended {
		st.ended = true
		st.stop()
		st.e.abort(st.s)
	}
}
