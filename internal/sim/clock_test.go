package sim

import (
	"sync"
	"time"
)

// atomicTime is a mutex-guarded time for the fake clock.
type atomicTime struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.t.t = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return c
}

// Now is the Config.Clock function.
func (c *fakeClock) Now() time.Time {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.t.t
}

// Set moves the clock to start + offset (start is the time at creation).
func (c *fakeClock) Set(offset time.Duration) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.t.t = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(offset)
}
