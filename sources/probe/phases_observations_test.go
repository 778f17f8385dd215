package probe

import (
	"math"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/probetest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestReasoningObservations: a reasoning probe feeds a TTFA sample to the
// store and its record carries the phases; one that only reasoned has no
// TTFA sample.
func TestReasoningObservations(t *testing.T) {
	srv := probetest.ReasoningServer(t)
	r := probeOnce(t, Options{URL: srv})
	obs := Observations(r, "ep", "probe:x", time.Second, time.Now())
	store := telemetry.NewStore(telemetry.StoreConfig{})
	var rec *telemetry.ProbeRecord
	for _, o := range obs {
		store.Observe(o)
		if o.Kind == telemetry.KindProbe {
			rec = o.Probe
		}
	}
	ph := r.Phases()
	if v, n := store.Quantile("ep", telemetry.TTFA, 0.5, time.Now(), time.Minute); n != 1 || math.Abs(v-ph.TTFA.Seconds()) > 1e-6 {
		t.Errorf("store TTFA %v (%v samples), want %v", v, n, ph.TTFA.Seconds())
	}
	if snap, ok := store.Signal("ep", telemetry.TTFA, time.Now(), time.Minute); !ok || snap.Source != "probe:x" {
		t.Errorf("TTFA snapshot %+v %v", snap, ok)
	}
	if rec == nil || rec.TTFAms != ms(ph.TTFA) || *rec.ReasoningTokens != 4 || *rec.AnswerTokens != 4 ||
		rec.PhaseTokensSource != "usage" || rec.ReasoningTPOTms <= 0 || rec.AnswerTPOTms <= 0 || rec.TTFAms <= rec.TTFTms {
		t.Errorf("record %+v", rec)
	}

	only := server(t, scripted("text/event-stream", []step{{Data: sseData(reasoningChunk("a"), reasoningChunk("b"),
		finishChunk, usageChunk(2), "[DONE]")}})).URL
	r = probeOnce(t, Options{URL: only})
	for _, o := range Observations(r, "ep", "probe:x", time.Second, time.Now()) {
		if o.Signal == telemetry.TTFA {
			t.Errorf("TTFA sample %v for a stream without an answer", o.Value)
		}
	}
}
