//go:build linux

package sim

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep(2), which wakes
// within the kernel's timer slack (~50 µs) instead of the Go timer's ~1 ms.
// It is only used for the last ≤1.5 ms of a step wait.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
