// Package notify delivers alert transitions outside ttftop: a command run
// per alert (--on-alert) and Alertmanager-compatible webhooks. Delivery
// must never stall the monitor: every notifier queues work for its own
// single worker and never blocks the caller (the UI loop): when the queue
// is full the notification is dropped and counted. A failed delivery is
// retried with bounded exponential backoff, and every attempt's outcome is
// reported as Health, so the monitor's own notification path is monitored.
package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttftop/ttftop/slo"
)

// Notifier receives the transitions of each evaluation. Notify must not
// block. A call with no transitions is a tick: notifiers that re-send
// (webhooks) do it then.
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

// Stats counts what a notifier did.
type Stats struct {
	Sent    uint64 `json:"sent"`
	Failed  uint64 `json:"failed"`  // given up after every attempt
	Dropped uint64 `json:"dropped"` // queue full, or shut down before delivery
	// Retried counts failed attempts that were tried again.
	Retried   uint64 `json:"retried"`
	LastError string `json:"last_error,omitempty"`
}

// Undelivered is how many notifications never arrived.
func (s Stats) Undelivered() uint64 { return s.Failed + s.Dropped }

// DefaultQueueSize is how many notifications wait at most.
const DefaultQueueSize = 64

// Retry defaults: 4 attempts, waiting 1 s, 2 s, 4 s between them, so a
// dead receiver costs a notification about 7 s of the worker's time. At
// exit a retry that would start after the exit grace is not waited for.
const (
	DefaultRetries    = 3
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 30 * time.Second
)

// ErrPermanent marks a failure a retry cannot fix (the receiver rejected
// the payload itself).
var ErrPermanent = errors.New("not retried")

// Outcome says what a Health report is about.
type Outcome string

const (
	// Delivered: a notification arrived (after no failure).
	Delivered Outcome = "delivered"
	// Retrying: an attempt failed and another follows after RetryIn.
	Retrying Outcome = "retrying"
	// GaveUp: every attempt failed; the notification is lost.
	GaveUp Outcome = "gave_up"
	// Recovered: a notification arrived after failed attempts.
	Recovered Outcome = "recovered"
)

// Health is a notifier's delivery health after one attempt. It is
// reported from the notifier's worker, never from Notify's caller.
type Health struct {
	Notifier string // "webhook http://am:9093/api/v2/alerts", "on-alert hook.sh"
	Outcome  Outcome
	At       time.Time
	// Err is the attempt's error (Retrying, GaveUp).
	Err string
	// Attempt is this attempt's number for its notification (1 = first),
	// of MaxAttempts.
	Attempt, MaxAttempts int
	// RetryIn is the wait before the next attempt (Retrying).
	RetryIn time.Duration
	// GraceEnded (GaveUp): the exit grace left no time for the attempts
	// still due, so Attempt may be below MaxAttempts.
	GraceEnded bool
	// ConsecutiveFailures counts failed attempts since the last delivery,
	// across notifications.
	ConsecutiveFailures int
	// LastOK is the last delivery (zero: none yet).
	LastOK time.Time
	Stats  Stats
}

// Failing reports whether the notifier's last attempt failed.
func (h Health) Failing() bool { return h.Outcome == Retrying || h.Outcome == GaveUp }

// Detail says a failing attempt in one line: "HTTP 405 Method Not
// Allowed (attempt 2 of 4, retrying in 2s; 1 undelivered)". Attempts are
// counted "N of M" throughout, so a give-up short of M says why.
func (h Health) Detail() string {
	var s string
	switch {
	case h.Outcome == Retrying:
		s = fmt.Sprintf("%s (attempt %d of %d, retrying in %s", h.Err, h.Attempt, h.MaxAttempts, h.RetryIn)
	case h.Outcome == GaveUp && h.GraceEnded:
		s = fmt.Sprintf("%s (gave up after attempt %d of %d: the exit grace leaves no time for attempt %d", h.Err, h.Attempt, h.MaxAttempts, h.Attempt+1)
	case h.Outcome == GaveUp && h.Attempt < h.MaxAttempts:
		s = fmt.Sprintf("%s (gave up after attempt %d of %d", h.Err, h.Attempt, h.MaxAttempts)
	case h.Outcome == GaveUp:
		s = fmt.Sprintf("%s (gave up after %d %s", h.Err, h.Attempt, plural(h.Attempt, "attempt"))
	default:
		return ""
	}
	if n := h.Stats.Undelivered(); n > 0 {
		s += fmt.Sprintf("; %d undelivered", n)
	}
	return s + ")"
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// retryPolicy bounds how one notification is retried.
type retryPolicy struct {
	retries             int // after the first attempt; 0 = none
	backoff, maxBackoff time.Duration
}

// newRetryPolicy applies the defaults: retries 0 = DefaultRetries,
// negative = none; backoff ≤ 0 = DefaultBackoff.
func newRetryPolicy(retries int, backoff time.Duration) retryPolicy {
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	return retryPolicy{retries: retries, backoff: backoff, maxBackoff: max(backoff, DefaultMaxBackoff)}
}

// queue is a bounded queue with one worker. Jobs run one at a time, in
// order; push never blocks.
type queue[T any] struct {
	name   string
	handle func(context.Context, T) error
	retry  retryPolicy
	report func(Health) // nil = not reported; called by the worker only

	mu     sync.Mutex // guards closed against a send on a closed channel
	closed bool
	jobs   chan T

	ctx    context.Context // cancelled to abort the job in flight
	cancel context.CancelFunc
	done   chan struct{}
	// deadline is the end of the exit grace, once shutdown has one: no
	// retry is promised that would start after it.
	deadline atomic.Pointer[time.Time]

	sent, failed, dropped, retried atomic.Uint64
	lastErr                        atomic.Pointer[string]

	// The worker's own state: touched by the worker goroutine only (and
	// by shutdown once the worker has exited).
	consecutive int
	lastOK      time.Time
	cut         graceCut
}

// graceCut counts the notifications the exit grace cut short.
type graceCut struct {
	jobs                 int
	attempt, maxAttempts int // of the last one
}

type queueOptions struct {
	name   string
	size   int
	retry  retryPolicy
	report func(Health)
}

func newQueue[T any](opts queueOptions, handle func(context.Context, T) error) *queue[T] {
	if opts.size <= 0 {
		opts.size = DefaultQueueSize
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &queue[T]{name: opts.name, handle: handle, retry: opts.retry, report: opts.report,
		jobs: make(chan T, opts.size), ctx: ctx, cancel: cancel, done: make(chan struct{})}
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
		q.deliver(job)
	}
}

// deliver tries one job until it succeeds, fails for good, runs out of
// attempts or the queue is shut down, reporting each attempt.
func (q *queue[T]) deliver(job T) {
	wait := q.retry.backoff
	attempts := q.retry.retries + 1
	for attempt := 1; ; attempt++ {
		err := q.handle(q.ctx, job)
		now := time.Now()
		if err == nil {
			q.sent.Add(1)
			oc := Delivered
			if q.consecutive > 0 {
				oc = Recovered
			}
			q.consecutive, q.lastOK = 0, now
			q.emit(Health{Outcome: oc, At: now, Attempt: attempt, MaxAttempts: attempts})
			return
		}
		q.consecutive++
		msg := err.Error()
		q.lastErr.Store(&msg)
		h := Health{Outcome: GaveUp, At: now, Err: msg, Attempt: attempt, MaxAttempts: attempts}
		if errors.Is(err, ErrPermanent) || attempt >= attempts {
			q.failed.Add(1)
			q.emit(h)
			return
		}
		if dl := q.deadline.Load(); q.ctx.Err() != nil || dl != nil && now.Add(wait).After(*dl) {
			q.cutShort(h)
			return
		}
		q.retried.Add(1)
		h.Outcome, h.RetryIn = Retrying, wait
		q.emit(h)
		if !sleep(q.ctx, wait) {
			h.At = time.Now()
			q.cutShort(h)
			return
		}
		wait = min(2*wait, q.retry.maxBackoff)
	}
}

// cutShort gives up on a job whose attempts the exit grace cannot hold.
func (q *queue[T]) cutShort(h Health) {
	q.failed.Add(1)
	q.cut = graceCut{jobs: q.cut.jobs + 1, attempt: h.Attempt, maxAttempts: h.MaxAttempts}
	h.Outcome, h.GraceEnded = GaveUp, true
	q.emit(h)
}

func (q *queue[T]) emit(h Health) {
	if q.report == nil {
		return
	}
	h.Notifier, h.ConsecutiveFailures, h.LastOK, h.Stats = q.name, q.consecutive, q.lastOK, q.stats()
	q.report(h)
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
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
// ones (retries included) until ctx ends, the exit grace: a retry that
// would start after its deadline is not waited for, and when ctx ends the
// job in flight is cancelled and the rest dropped. It returns once the
// worker has exited, with a *GraceError when the grace cut any short.
func (q *queue[T]) shutdown(ctx context.Context) error {
	var grace time.Duration
	if dl, ok := ctx.Deadline(); ok {
		grace = time.Until(dl)
		q.deadline.Store(&dl)
	}
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.jobs)
	}
	q.mu.Unlock()
	defer q.cancel()
	var err error
	select {
	case <-q.done:
	case <-ctx.Done():
		q.cancel()
		<-q.done
		err = ctx.Err()
	}
	if q.cut.jobs == 0 && err == nil {
		return nil
	}
	return &GraceError{Grace: grace, CutShort: q.cut.jobs, Attempt: q.cut.attempt, MaxAttempts: q.cut.maxAttempts, Err: err}
}

// GraceError says what the exit grace cut short: notifications given up
// before all their attempts (the last after Attempt of MaxAttempts), and
// Err, the context's error, when it ended with work still queued.
type GraceError struct {
	Grace                time.Duration // 0: not known (no deadline)
	CutShort             int
	Attempt, MaxAttempts int
	Err                  error
}

func (e *GraceError) Error() string {
	grace := "the exit grace"
	if e.Grace > 0 {
		grace = "the " + slo.FormatDuration(e.Grace.Round(graceRounding(e.Grace))) + " exit grace"
	}
	switch {
	case e.CutShort == 1:
		return fmt.Sprintf("%s cut delivery short after attempt %d of %d", grace, e.Attempt, e.MaxAttempts)
	case e.CutShort > 1:
		return fmt.Sprintf("%s cut %d notifications short, the last after attempt %d of %d", grace, e.CutShort, e.Attempt, e.MaxAttempts)
	}
	return fmt.Sprintf("%s ended before every queued notification was tried: %v", grace, e.Err)
}

func (e *GraceError) Unwrap() error { return e.Err }

// graceRounding: a grace measured as 4.9999s reads as the 5s it was set to.
func graceRounding(d time.Duration) time.Duration {
	if d >= time.Second {
		return 100 * time.Millisecond
	}
	return time.Millisecond
}

func (q *queue[T]) stats() Stats {
	s := Stats{Sent: q.sent.Load(), Failed: q.failed.Load(), Dropped: q.dropped.Load(), Retried: q.retried.Load()}
	if p := q.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}
