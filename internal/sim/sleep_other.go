//go:build !linux

package sim

import (
	"runtime"
	"time"
)

// preciseSleep spins (yielding) for the last ≤1.5 ms of a step wait, where
// no portable sub-millisecond sleep exists.
func preciseSleep(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		runtime.Gosched()
	}
}
