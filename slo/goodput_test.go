package slo

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

func TestBoundsFor(t *testing.T) {
	objs := []Objective{
		{Kind: Percentile, Signal: telemetry.TTFT, Threshold: 5},
		{Kind: Ratio, Signal: telemetry.TTFT, Threshold: 2, Endpoint: "prod/*"},
		{Kind: Percentile, Signal: telemetry.TTFA, Threshold: 8},
		{Kind: ErrorRate, Signal: telemetry.ErrorRate, Threshold: 0.01},
		{Kind: Percentile, Signal: telemetry.KVCache, Threshold: 0.9},
	}
	if b := BoundsFor(objs, "prod/llama"); len(b) != 2 || b[telemetry.TTFT] != 2 || b[telemetry.TTFA] != 8 {
		t.Errorf("prod bounds %v", b)
	}
	if b := BoundsFor(objs, "dev/llama"); len(b) != 2 || b[telemetry.TTFT] != 5 {
		t.Errorf("dev bounds %v", b)
	}
}

// TestGood: failed requests are never good, a missing TTFA fails its
// bound, a one-token request meets a TPOT bound (no decode to be slow).
func TestGood(t *testing.T) {
	b := Bounds{telemetry.TTFT: 0.5, telemetry.TPOT: 0.05}
	for _, c := range []struct {
		r    telemetry.ProbeRecord
		want bool
	}{
		{telemetry.ProbeRecord{OK: true, TTFTms: 400, TPOTms: 40}, true},
		{telemetry.ProbeRecord{OK: true, TTFTms: 600, TPOTms: 40}, false},
		{telemetry.ProbeRecord{OK: true, TTFTms: 400, TPOTms: 60}, false},
		{telemetry.ProbeRecord{OK: true, TTFTms: 400}, true},
		{telemetry.ProbeRecord{OK: false, TTFTms: 1, TPOTms: 1}, false},
	} {
		if got := b.Good(&c.r); got != c.want {
			t.Errorf("Good(%+v) = %v, want %v", c.r, got, c.want)
		}
	}
	if (Bounds{telemetry.TTFA: 1}).Good(&telemetry.ProbeRecord{OK: true, TTFTms: 10}) {
		t.Error("a request without an answer met a TTFA bound")
	}
}
