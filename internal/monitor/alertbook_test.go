package monitor

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// TestOverlayPeakIsLive: live raises an active alert's peak on every
// evaluation but records a transition only when the state changes, so the
// recorded peak is the one at the transition. A replay must show the peak
// live showed at that time (at least the value it shows beside it), not
// the one of the last transition: QA saw "value 0.833, peak 0.571" where
// live showed "peak 83%".
func TestOverlayPeakIsLive(t *testing.T) {
	fired := time.Date(2026, 12, 1, 22, 7, 45, 0, time.UTC)
	rec := slo.Alert{Objective: "availability", Endpoint: "e", Severity: "page", Kind: slo.Availability,
		Value: 0.571, Peak: 0.571, Threshold: 0.5, ActiveAt: fired, FiredAt: fired}
	raw, err := json.Marshal(slo.Transition{At: fired, From: slo.Resolved, To: slo.Firing, Alert: rec})
	if err != nil {
		t.Fatal(err)
	}
	b := newAlertBook(0)
	b.apply(raw)
	judged := rec
	judged.State, judged.EvaluatedAt = slo.Firing, fired.Add(13*time.Second)
	judged.Value, judged.Peak, judged.Data = 0.833, 0.833, telemetry.Live
	got := b.overlay([]slo.Alert{judged})
	if len(got) != 1 || got[0].State != slo.Firing || got[0].Value != 0.833 || got[0].Peak != 0.833 {
		t.Fatalf("overlay of a firing alert whose value rose: %+v", got)
	}
	// The replay's own judgement may not be active (another evaluation
	// tick): the peak is still at least the value shown.
	judged.State, judged.Peak, judged.Value = slo.Inactive, 0, 0.7
	if got := b.overlay([]slo.Alert{judged}); got[0].Peak != 0.7 {
		t.Errorf("peak %v beside value 0.7", got[0].Peak)
	}
	// A resolved alert keeps its recorded peak.
	judged.State = slo.Inactive
	if raw, err = json.Marshal(slo.Transition{At: fired.Add(time.Minute), From: slo.Firing, To: slo.Resolved, Alert: rec}); err != nil {
		t.Fatal(err)
	}
	b.apply(raw)
	if got := b.overlay([]slo.Alert{judged}); got[0].State != slo.Resolved || got[0].Peak != 0.571 {
		t.Errorf("resolved alert: %+v", got[0])
	}
}
