package monitor

import (
	"testing"
	"time"
)

type windowRecorder []time.Duration

func (w *windowRecorder) WindowChanged(d time.Duration) { *w = append(*w, d) }

// The viewed window reaches the sources that follow it, capped at the
// store's longest window (history beyond it could not be held).
func TestViewWindowReachesFollowers(t *testing.T) {
	m := New(Options{})
	var got windowRecorder
	m.followers = append(m.followers, &got)
	m.ViewWindow(15 * time.Minute)
	m.ViewWindow(24 * time.Hour)
	if len(got) != 2 || got[0] != 15*time.Minute || got[1] != m.Store.Config().MaxWindow {
		t.Errorf("followers told %v, want [15m %s]", got, m.Store.Config().MaxWindow)
	}
}
