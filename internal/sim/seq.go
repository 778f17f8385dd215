package sim

import (
	"sync"
	"sync/atomic"
)

// Finish reasons, as in vllm:request_success_total{finished_reason}.
const (
	finishStop   = "stop"
	finishLength = "length"
	finishAbort  = "abort"
)

type seqState int32

const (
	stateWaiting seqState = iota
	stateRunning
	stateDone
)

// seq is one request inside an engine. Fields in the first block are fixed
// at submission; the second block belongs to the engine goroutine; the
// third is the hand-off to the consumer, guarded by mu.
type seq struct {
	id         uint64
	prompt     int    // prompt tokens
	maxTokens  int    // effective max_tokens
	target     int    // tokens to generate (<= maxTokens)
	finishAt   string // reason when target is reached
	reasoning  int    // the first reasoning tokens of the output are thinking
	paramMax   int    // max_tokens as requested (for request_params_max_tokens)
	textSeed   uint64
	arrival    int64 // ns since server epoch
	internal   bool  // background load: no per-token wake-ups
	aborted    atomic.Bool
	state      atomic.Int32 // seqState; waiting→running by engine, →done by whoever finishes it
	preemptNum int
	// A prompt prefix others share (a system prompt, a repeated prompt):
	// its key and length in tokens; 0 tokens when none.
	prefixKey    uint64
	prefixTokens int
	// A decode worker's request whose prompt KV arrives by transfer
	// (Request.RemoteKV): how long the transfer takes, and when it is in
	// (set at submission).
	remoteKV   bool
	kvTransfer int64
	kvReady    int64
	// adapter is the LoRA adapter the request named ("" for the base).
	adapter string

	// engine goroutine only
	scheduled   int64 // first admission
	needPrefill int   // tokens to (re)compute before the next token
	prefilled   int
	generated   int
	firstTok    int64
	lastTok     int64
	blocks      int
	extra       int // tokens this step beyond the first (accepted draft tokens)

	mu       sync.Mutex
	times    []int64 // step deadlines of tokens not yet taken by the consumer
	produced int     // tokens produced so far
	finish   string  // set once when the request ends
	err      error   // non-nil when it ended in an error (outage, shutdown)
	notify   chan struct{}
}

func newSeq() *seq { return &seq{notify: make(chan struct{}, 1)} }

// deliver hands the n tokens one step produced (at deadline) to the
// consumer at once, so they go out in one chunk, and when final the
// finish reason. It never blocks the engine: the consumer is woken
// through a 1-slot channel and drains everything pending at once.
func (s *seq) deliver(deadline int64, n int, finish string) {
	s.mu.Lock()
	s.produced += n
	if !s.internal {
		for range n {
			s.times = append(s.times, deadline)
		}
	}
	if finish != "" {
		s.finish = finish
	}
	s.mu.Unlock()
	if !s.internal || finish != "" {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// fail ends the request with an error (outage, shutdown).
func (s *seq) fail(err error) {
	s.mu.Lock()
	if s.finish == "" {
		s.finish, s.err = finishAbort, err
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// batch is what a consumer takes in one go.
type batch struct {
	first  int     // index of the first token in times
	times  []int64 // deadlines of the new tokens
	finish string
	err    error
}

// take moves pending tokens into buf (reused by the caller to avoid
// allocating per token).
func (s *seq) take(buf []int64) batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := batch{first: s.produced - len(s.times), finish: s.finish, err: s.err}
	b.times = append(buf[:0], s.times...)
	s.times = s.times[:0]
	return b
}
