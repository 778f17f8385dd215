package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

func TestGoodputOf(t *testing.T) {
	b := slo.Bounds{telemetry.TTFT: 0.5, telemetry.TPOT: 0.05}
	recs := []telemetry.ProbeRecord{
		{OK: true, TTFTms: 200, TPOTms: 20, E2Ems: 1000, OutputTokens: 40, TokensSource: "usage"}, // good
		{OK: true, TTFTms: 600, TPOTms: 20, E2Ems: 1400, OutputTokens: 40, TokensSource: "usage"}, // TTFT over
		{OK: true, TTFTms: 100, TPOTms: 51, E2Ems: 2100, OutputTokens: 40, TokensSource: "usage"}, // TPOT over
		{OK: true, TTFTms: 500, E2Ems: 500, OutputTokens: 1, TokensSource: "events"},              // at the bound, no TPOT: good
		{OK: false, ErrorKind: "timeout"}, // failed: not good
	}
	g := GoodputOf(recs, b, 2*time.Second)
	if g.Requests != 5 || g.Good != 2 || g.Share != 0.4 || g.GoodOutputTokens != 41 || g.GoodOutputThroughput != 20.5 ||
		g.RequestGoodput != 1 || g.EstimatedCounts != 1 || g.BoundsMS[telemetry.TTFT] != 500 || g.BoundsMS[telemetry.TPOT] != 50 {
		t.Errorf("goodput %+v", g)
	}
	if want := "goodput 40.0% (2 of 5 requests meet TTFT ≤ 500ms, TPOT ≤ 50ms)  good 20.5 tok/s  1.00 good req/s"; !strings.HasPrefix(g.Text(), want) {
		t.Errorf("text %q, want prefix %q", g.Text(), want)
	}
	// A TTFA bound fails a request that never answered.
	withTTFA := slo.Bounds{telemetry.TTFA: 1}
	if withTTFA.Good(&telemetry.ProbeRecord{OK: true, TTFTms: 10}) || !withTTFA.Good(&telemetry.ProbeRecord{OK: true, TTFTms: 10, TTFAms: 900}) {
		t.Error("TTFA bound: a missing TTFA must fail it, 900 ms must meet 1 s")
	}
	if GoodputOf(recs, slo.Bounds{}, time.Second) != nil || GoodputOf(nil, b, time.Second) != nil {
		t.Error("goodput without bounds or requests")
	}
}

// TestGoodputSink: per endpoint, from its announcement to its last probe.
func TestGoodputSink(t *testing.T) {
	s := NewGoodputSink([]slo.Objective{{Kind: slo.Percentile, Signal: telemetry.TTFT, Threshold: 1}})
	t0 := time.Unix(1_700_000_000, 0)
	s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: t0, Endpoint: "a"})
	for i, ttft := range []float64{200, 1500, 300, 400} {
		rec := telemetry.ProbeRecord{OK: true, TTFTms: ttft, OutputTokens: 10}
		s.Observe(telemetry.Observation{Kind: telemetry.KindProbe, At: t0.Add(time.Duration(i+1) * time.Second), Endpoint: "a", Probe: &rec})
	}
	s.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: t0, Endpoint: "a", Signal: telemetry.TTFT, Value: 9})
	got := s.Results()
	if len(got) != 1 || got[0].Endpoint != "a" || got[0].Good != 3 || got[0].Share != 0.75 || got[0].DurationS != 4 || got[0].DurationMS != 4000 ||
		got[0].GoodOutputThroughput != 7.5 {
		t.Errorf("results %+v", got)
	}
}
