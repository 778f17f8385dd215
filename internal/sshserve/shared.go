package sshserve

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui"
)

// sharedReadAge is how far apart two viewers' refreshes may be and still
// share one snapshot. Viewers refresh on their own phases (default every
// second), so without sharing ten viewers compute ten snapshots a second
// (quantiles sort every sample in the window: the costliest read); with
// it about two. A viewer's figures are then at most this much older than
// its own clock, well under any source's interval.
const sharedReadAge = 500 * time.Millisecond

// maxSharedWindows bounds the cache; viewers pick among a few windows.
const maxSharedWindows = 16

// sharedData is a tui.Data whose Snapshot is computed once for viewers
// refreshing within maxAge of each other; the other reads (cheap, or only
// for the detail view) pass through.
type sharedData struct {
	tui.Data
	maxAge time.Duration

	mu    sync.Mutex
	snaps map[time.Duration]*sharedSnap // by window
}

// sharedSnap is one window's latest snapshot; its lock is held while it
// is computed, so viewers arriving meanwhile wait for it instead of
// computing it again.
type sharedSnap struct {
	mu   sync.Mutex
	at   time.Time
	snap telemetry.Snapshot
	ok   bool
}

func newSharedData(d tui.Data, maxAge time.Duration) *sharedData {
	return &sharedData{Data: d, maxAge: maxAge, snaps: map[time.Duration]*sharedSnap{}}
}

// Snapshot returns the window's snapshot computed within maxAge of now,
// computing it when there is none.
func (d *sharedData) Snapshot(now time.Time, window time.Duration) telemetry.Snapshot {
	e := d.entry(window)
	e.mu.Lock()
	defer e.mu.Unlock()
	if age := now.Sub(e.at); !e.ok || age >= d.maxAge || age <= -d.maxAge {
		e.snap, e.at, e.ok = d.Data.Snapshot(now, window), now, true
	}
	return copySnapshot(e.snap)
}

func (d *sharedData) entry(window time.Duration) *sharedSnap {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.snaps[window]
	if !ok {
		if len(d.snaps) >= maxSharedWindows {
			clear(d.snaps) // an odd set of windows: start over rather than grow
		}
		e = &sharedSnap{}
		d.snaps[window] = e
	}
	return e
}

// copySnapshot gives each viewer its own slices and signal maps, so a
// view that sorts or edits what it got cannot race with another viewer.
// Deeper values (labels, warnings, quantile pointers) are never written
// after the store builds them and stay shared.
func copySnapshot(s telemetry.Snapshot) telemetry.Snapshot {
	s.Endpoints = slices.Clone(s.Endpoints)
	for i := range s.Endpoints {
		s.Endpoints[i].Signals = maps.Clone(s.Endpoints[i].Signals)
	}
	s.Sources = slices.Clone(s.Sources)
	return s
}
