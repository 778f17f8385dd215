package probe

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Backoff bounds when a server says 429 without Retry-After.
const (
	minBackoff = time.Second
	maxBackoff = 5 * time.Minute
)

// schedule starts probes on a timetable and never beyond its limits: at
// most limits.MaxConcurrency in flight (concurrency ≤ that, validated), at
// most limits.MaxPerMinute starts a minute, and nothing before a 429's
// Retry-After has passed.
type schedule struct {
	interval    time.Duration // between starts; 0 = as soon as a slot is free
	jitter      float64       // ± fraction of interval, and the first start's delay
	concurrency int
	count       int // starts in all; 0 = until ctx is done
	limits      Limits
	rng         *rand.Rand

	mu        sync.Mutex
	notBefore time.Time // backoff: no start before this
	streak    int       // consecutive rate-limited results
}

// DoScheduled sends n requests on the timetable of the prober's options
// (interval, concurrency, limits, 429 backoff), numbers each result's Seq
// from 1 in start order and hands it to done (called concurrently). It
// returns when all n have finished or ctx is done and every request in
// flight has returned.
func (p *Prober) DoScheduled(ctx context.Context, n int, done func(*Result)) {
	newSchedule(p.opts, n).run(ctx, func(ctx context.Context, seq int) *Result {
		r := p.Do(ctx, nil)
		r.Seq = seq + 1
		return r
	}, done)
}

func newSchedule(o Options, count int) *schedule {
	return &schedule{
		interval:    o.Interval,
		jitter:      o.Jitter,
		concurrency: min(o.Concurrency, o.Limits.MaxConcurrency),
		count:       count,
		limits:      o.Limits,
		rng:         rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
}

// run starts probe(ctx, seq) per the timetable and hands each result to
// done (called concurrently). It returns when count probes have finished
// or ctx is done and every probe in flight has returned: no goroutine
// outlives it.
func (s *schedule) run(ctx context.Context, probe func(context.Context, int) *Result, done func(*Result)) {
	slots := make(chan struct{}, s.concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	minGap := time.Minute / time.Duration(s.limits.MaxPerMinute)
	next := time.Now()
	if s.interval > 0 && s.jitter > 0 {
		next = next.Add(time.Duration(s.rng.Float64() * s.jitter * float64(s.interval)))
	}
	var last time.Time
	for seq := 0; s.count == 0 || seq < s.count; seq++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		// Re-check after every wait: a 429 may push notBefore meanwhile.
		for {
			at := next
			if !last.IsZero() && last.Add(minGap).After(at) {
				at = last.Add(minGap)
			}
			s.mu.Lock()
			if s.notBefore.After(at) {
				at = s.notBefore
			}
			s.mu.Unlock()
			wait := time.Until(at)
			if wait <= 0 {
				break
			}
			if !sleep(ctx, wait) {
				<-slots
				return
			}
		}
		last = time.Now()
		if s.interval > 0 {
			f := 1 + s.jitter*(2*s.rng.Float64()-1)
			next = last.Add(time.Duration(f * float64(s.interval)))
		}
		wg.Go(func() {
			defer func() { <-slots }()
			res := probe(ctx, seq)
			s.observe(res)
			done(res)
		})
	}
}

// observe applies backoff to rate limiting only: a 429 waits for its
// Retry-After, else doubles from max(interval, 1 s) while 429s continue
// (the probe is the load being refused). Any other failure — a 503 with
// Retry-After included — keeps the interval: an outage is what a monitor
// must keep measuring, one probe per interval is no load, and every
// attempt is data for the availability objective.
func (s *schedule) observe(r *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.ErrorKind != ErrRateLimited {
		if r.OK {
			s.streak = 0
		}
		return
	}
	d := r.RetryAfter
	if d == 0 {
		d = max(s.interval, minBackoff) << min(s.streak, 10)
		d = min(d, maxBackoff)
	}
	s.streak++
	if until := time.Now().Add(d); until.After(s.notBefore) {
		s.notBefore = until
	}
}

// sleep waits d or until ctx is done; false means ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
