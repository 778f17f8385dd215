// Package telemetrytest has helpers for testing what produces
// observations (sources, probes).
package telemetrytest

import (
	"sync"

	"github.com/ttftop/ttftop/telemetry"
)

// Collector is a concurrency-safe telemetry.Sink that keeps every
// observation.
type Collector struct {
	mu  sync.Mutex
	obs []telemetry.Observation
}

// Observe implements telemetry.Sink.
func (c *Collector) Observe(o telemetry.Observation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.obs = append(c.obs, o)
}

// All returns a copy of the observations so far.
func (c *Collector) All() []telemetry.Observation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]telemetry.Observation(nil), c.obs...)
}

// Take returns the observations so far and forgets them.
func (c *Collector) Take() []telemetry.Observation {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.obs
	c.obs = nil
	return out
}

// Reset forgets the observations so far.
func (c *Collector) Reset() { c.Take() }
