// Package notify delivers SLO alert transitions to the outside world: a
// command run with the alert as JSON on stdin, and a webhook that posts
// Alertmanager-compatible alerts. Every notifier queues work for its own
// single worker and never blocks the caller (the UI loop): when the queue
// is full the notification is dropped and counted.
package notify

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tokentop/tokentop/slo"
)

// Notifier receives the transitions of each evaluation. Notify must not
// block.
type Notifier interface {
	Notify(now time.Time, trs []slo.Transition)
}

// Notifiers fans transitions out to several notifiers.
type Notifiers []Notifier

// Notify passes trs to every notifier.
func (ns Notifiers) Notify(now time.Time, trs []slo.Transition) {
	for _, n := range ns {
		n.Notify(now, trs)
	}
}

// Stats counts what a notifier did, so the monitor's own notification
// path is monitored too.
type Stats struct {
	Sent      uint64 `json:"sent"`
	Failed    uint64 `json:"failed"`
	Dropped   uint64 `json:"dropped"` // queue full or shut down
	LastError string `json:"last_error,omitempty"`
}

// DefaultQueueSize is how many notifications wait at most.
const DefaultQueueSize = 64

// queue is a bounded queue with one worker. Jobs run one at a time, in
// order; push never blocks.
type queue[T any] struct {
	handle func(context.Context, T) error

	mu     sync.Mutex // guards closed against a send on a closed channel
	closed bool
	jobs   chan T

	ctx    context.Context // cancelled to abort the job in flight
	cancel context.CancelFunc
	done   chan struct{}

	sent, failed, dropped atomic.Uint64
	lastErr               atomic.Pointer[string]
}

func newQueue[T any](size int, handle func(context.Context, T) error) *queue[T] {
	if size <= 0 {
		size = DefaultQueueSize
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &queue[T]{handle: handle, jobs: make(chan T, size), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go q.run()
	return q
}

func (q *queue[T]) run() {
	defer close(q.done)
	for job := range q.jobs {
		if q.ctx.Err() != nil {
			q.dropped.Add(1)
			continue
		}
		if err := q.handle(q.ctx, job); err != nil {
			q.failed.Add(1)
			msg := err.Error()
			q.lastErr.Store(&msg)
			continue
		}
		q.sent.Add(1)
	}
}

// push enqueues job, or drops it when the queue is full or shut down.
func (q *queue[T]) push(job T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		q.dropped.Add(1)
		return false
	}
	select {
	case q.jobs <- job:
		return true
	default:
		q.dropped.Add(1)
		return false
	}
}

// shutdown stops accepting jobs and lets the worker finish the queued
// ones until ctx ends; then the job in flight is cancelled and the rest
// dropped. It returns once the worker has exited.
func (q *queue[T]) shutdown(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.jobs)
	}
	q.mu.Unlock()
	defer q.cancel()
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		q.cancel()
		<-q.done
		return ctx.Err()
	}
}

func (q *queue[T]) stats() Stats {
	s := Stats{Sent: q.sent.Load(), Failed: q.failed.Load(), Dropped: q.dropped.Load()}
	if p := q.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}
