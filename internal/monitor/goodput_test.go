package monitor

import (
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// TestGoodputOnTheDashboard: each probe is judged against its endpoint's
// latency objectives as it arrives; the snapshot's goodput is the good
// share over the window, failed probes counting as not good, and an
// endpoint without latency objectives has no goodput at all (not 0).
func TestGoodputOnTheDashboard(t *testing.T) {
	objs := []slo.Objective{
		{Name: "ttft", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 1, Endpoint: "judged"},
		{Name: "tpot", Kind: slo.Percentile, Signal: telemetry.TPOT, Percentile: 0.95, Threshold: 0.05, Endpoint: "judged"},
	}
	m := New(Options{Objectives: objs})
	t0 := time.Unix(1_700_000_000, 0)
	const source = "probe:http://127.0.0.1:1"
	for _, ep := range []string{"judged", "free"} {
		m.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: t0, Endpoint: ep, Source: source,
			Info: &telemetry.Endpoint{Name: ep}})
		for i, p := range []telemetry.ProbeRecord{
			{OK: true, TTFTms: 400, TPOTms: 20, OutputTokens: 50},  // good
			{OK: true, TTFTms: 1500, TPOTms: 20, OutputTokens: 50}, // TTFT too slow
			{OK: true, TTFTms: 300, TPOTms: 80, OutputTokens: 50},  // TPOT too slow
			{OK: true, TTFTms: 200, TPOTms: 10, OutputTokens: 50},  // good
			{OK: false, ErrorKind: "http", Status: 503},            // failed: not good
		} {
			m.Observe(telemetry.Observation{Kind: telemetry.KindProbe, At: t0.Add(time.Duration(i+1) * time.Second),
				Endpoint: ep, Source: source, Probe: &p, Interval: 30 * time.Second})
		}
	}
	// 25 s after the last probe of a 30 s interval: goodput is as live as
	// the probe's own figures.
	snap := m.Store.Snapshot(t0.Add(30*time.Second), time.Minute)
	for _, es := range snap.Endpoints {
		g, ok := es.Signals[telemetry.Goodput]
		switch es.Name {
		case "judged":
			if !ok || g.Value == nil || *g.Value != 40 || g.Count != 5 || g.Unit != "%" || g.State != telemetry.Live {
				t.Errorf("goodput of the judged endpoint: %+v (want 40%% of 5 probes)", g)
			}
		case "free":
			if ok {
				t.Errorf("an endpoint without latency objectives has a goodput: %+v", g)
			}
		}
	}
}
