package diagnosis

import (
	"math"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
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

// An objective breached from the first refresh (the threshold below what
// the endpoint usually does, or a loaded machine) leaves it unclear while
// its baselines warm, and they warm through it: a later fault is named
// against them. Once warm, an unclear spell teaches them nothing: a
// prefill drift too small to be a cause stays out of the baseline the
// fault is measured against.
func TestBreachFromTheStartStillWarmsBaselines(t *testing.T) {
	d := New(Config{})
	now := t0
	refresh := func(f figs) Diagnosis {
		t.Helper()
		diags := d.Update(telemetry.Snapshot{At: now, Endpoints: []telemetry.EndpointSnapshot{endpoint("sick", f)}}, pending("sick", telemetry.TTFT))
		now = now.Add(time.Second)
		return diags[0]
	}
	h := healthy()
	for i := range 40 {
		if got := refresh(h); got.Leading() != Unclear {
			t.Fatalf("refresh %d of a breach with healthy figures: %v, want unclear", i, causes(got))
		}
	}
	for range 60 {
		refresh(h.with(server{telemetry.PrefillTime: 130, telemetry.TTFT: 135}, nil))
	}
	got := refresh(h.with(server{telemetry.PrefillTime: 400, telemetry.TTFT: 405}, probe{telemetry.TTFT: 425}))
	if got.Leading() != Prefill {
		t.Fatalf("the fault after a breach from the start: %v (%+v), want prefill", causes(got), got.Causes)
	}
	evidence(t, find(t, got, Prefill), figPrefill, 400, ptr(95), "own")
}
