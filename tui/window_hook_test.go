package tui

import (
	"slices"
	"testing"
	"time"
)

// The window keys tell OnWindow (the monitor, then PromQL's backfill)
// each new window, and nothing when the window does not change.
func TestWindowKeysTellOnWindow(t *testing.T) {
	opts := testOptions()
	var told []time.Duration
	opts.OnWindow = func(d time.Duration) { told = append(told, d) }
	m := newSync(t, opts, 120, 40)
	press(m, "+", "+", "+", "+", "-")
	want := []time.Duration{15 * time.Minute, time.Hour, 15 * time.Minute}
	if !slices.Equal(told, want) {
		t.Fatalf("OnWindow told %v, want %v", told, want)
	}
}
