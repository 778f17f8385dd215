// Package loop is the polling loop of the scraping sources (scrape, gpu).
package loop

import (
	"context"
	"math/rand/v2"
	"time"
)

// maxJitter is the largest jitter fraction Run applies.
const maxJitter = 0.5

// Run calls once every interval ± jitter (a fraction of interval) until
// ctx is done, then returns ctx.Err(). The first call comes after a random
// offset within one interval, so many targets do not poll in lockstep.
// once's error is ignored: sources report failures as observations.
func Run(ctx context.Context, interval time.Duration, jitter float64, once func(context.Context) error) error {
	timer := time.NewTimer(time.Duration(rand.Float64() * float64(interval)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		start := time.Now()
		_ = once(ctx)
		timer.Reset(nextWait(interval, jitter, time.Since(start)))
	}
}

// nextWait is interval ± jitter minus the time the last call took, but at
// least a tenth of the interval so a slow target is not hammered. Jitter
// is capped at 0.5: more would let polls bunch up.
func nextWait(interval time.Duration, jitter float64, took time.Duration) time.Duration {
	jitter = min(max(jitter, 0), maxJitter)
	wait := time.Duration(float64(interval)*(1+jitter*(2*rand.Float64()-1))) - took
	return max(wait, interval/10)
}
