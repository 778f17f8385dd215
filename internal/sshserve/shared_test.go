package sshserve

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui"
)

// countingData counts the snapshots it computes.
type countingData struct {
	tui.Data
	n atomic.Int64
}

func (c *countingData) Snapshot(now time.Time, window time.Duration) telemetry.Snapshot {
	c.n.Add(1)
	return telemetry.Snapshot{At: now, Window: window,
		Endpoints: []telemetry.EndpointSnapshot{{Endpoint: telemetry.Endpoint{Name: "a"},
			Signals: map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.TTFT: {Unit: "s"}}}},
		Sources: []telemetry.SourceStatus{{Name: "probe"}}}
}

func TestSharedSnapshot(t *testing.T) {
	c := &countingData{}
	d := newSharedData(c, time.Second)
	t0 := time.Unix(1000, 0)
	a := d.Snapshot(t0, time.Minute)
	b := d.Snapshot(t0.Add(900*time.Millisecond), time.Minute)
	if c.n.Load() != 1 {
		t.Fatalf("two reads 0.9 s apart computed %d snapshots, want 1", c.n.Load())
	}
	// Each viewer owns its copy: editing one leaves the other intact.
	a.Endpoints[0].Name = "changed"
	a.Endpoints[0].Signals[telemetry.TTFT] = telemetry.SignalSnapshot{Unit: "changed"}
	a.Sources[0].Name = "changed"
	if b.Endpoints[0].Name != "a" || b.Endpoints[0].Signals[telemetry.TTFT].Unit != "s" || b.Sources[0].Name != "probe" {
		t.Errorf("viewers share mutable parts of a snapshot: %+v", b)
	}
	d.Snapshot(t0, 5*time.Minute)                          // another window
	d.Snapshot(t0.Add(1500*time.Millisecond), time.Minute) // too old
	if c.n.Load() != 3 {
		t.Errorf("computed %d snapshots, want 3", c.n.Load())
	}
	// Concurrent viewers at the same moment compute it once.
	var wg sync.WaitGroup
	t1 := t0.Add(time.Hour)
	for range 10 {
		wg.Go(func() { d.Snapshot(t1, time.Minute) })
	}
	wg.Wait()
	if c.n.Load() != 4 {
		t.Errorf("10 concurrent reads: %d snapshots computed in all, want 4", c.n.Load())
	}
}
