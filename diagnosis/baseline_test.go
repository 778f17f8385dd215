package diagnosis

import (
	"math"
	"testing"
	"time"
)

// A baseline warmed for 30 s of a 5 min time constant is the mean of
// those 30 s: the first sample (an engine starting idle) does not hold it
// down, and a later change moves it by its share of the history.
func TestBaselineIsTheMeanOfItsHistory(t *testing.T) {
	var e ewma
	now := t0
	e.add(0, now, 5*time.Minute) // startup: nothing running yet
	for range 30 {
		now = now.Add(time.Second)
		e.add(5, now, 5*time.Minute)
	}
	if math.Abs(e.value-5) > 1e-9 || e.held != 30*time.Second {
		t.Errorf("after 30 s at 5: baseline %v over %s, want 5 over 30s", e.value, e.held)
	}
	for range 30 {
		now = now.Add(time.Second)
		e.add(10, now, 5*time.Minute)
	}
	// 30 s at 5 then 30 s at 10, the older half decayed by exp(−30/300).
	w := math.Exp(-30.0 / 300)
	want := (5*(1-w)*w + 10*(1-w)) / ((1 - w) * (1 + w))
	if math.Abs(e.value-want) > 1e-9 {
		t.Errorf("after 30 s more at 10: baseline %v, want %v", e.value, want)
	}
}
