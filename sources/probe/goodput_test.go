package probe

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
)

func TestGoodputOf(t *testing.T) {
	b := Bounds{telemetry.TTFT: 0.5, telemetry.TPOT: 0.05}
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
	withTTFA := Bounds{telemetry.TTFA: 1}
	if withTTFA.Good(&telemetry.ProbeRecord{OK: true, TTFTms: 10}) || !withTTFA.Good(&telemetry.ProbeRecord{OK: true, TTFTms: 10, TTFAms: 900}) {
		t.Error("TTFA bound: a missing TTFA must fail it, 900 ms must meet 1 s")
	}
	if GoodputOf(recs, Bounds{}, time.Second) != nil || GoodputOf(nil, b, time.Second) != nil {
		t.Error("goodput without bounds or requests")
	}
}

func TestBoundsFor(t *testing.T) {
	objs := []slo.Objective{
		{Kind: slo.Percentile, Signal: telemetry.TTFT, Threshold: 5},
		{Kind: slo.Ratio, Signal: telemetry.TTFT, Threshold: 2, Endpoint: "prod/*"},
		{Kind: slo.Percentile, Signal: telemetry.TTFA, Threshold: 8},
		{Kind: slo.ErrorRate, Signal: telemetry.ErrorRate, Threshold: 0.01},
		{Kind: slo.Percentile, Signal: telemetry.KVCache, Threshold: 0.9},
	}
	if b := BoundsFor(objs, "prod/llama"); len(b) != 2 || b[telemetry.TTFT] != 2 || b[telemetry.TTFA] != 8 {
		t.Errorf("prod bounds %v", b)
	}
	if b := BoundsFor(objs, "dev/llama"); len(b) != 2 || b[telemetry.TTFT] != 5 {
		t.Errorf("dev bounds %v", b)
	}
}

// TestCLIGoodput: the first token comes 40 ms after the request; with a
// 10 ms TTFT bound no request is good, with 10 s every one is.
func TestCLIGoodput(t *testing.T) {
	steps := []step{{wait: 40 * time.Millisecond, data: sseData(chatChunk("a"))}, {wait: 5 * time.Millisecond,
		data: sseData(chatChunk("b"), finishChunk, usageChunk(2), "[DONE]")}}
	url := server(t, scripted("text/event-stream", steps)).URL
	for _, c := range []struct {
		bound string
		share float64
	}{{"10ms", 0}, {"10s", 1}} {
		out, _, err := runCLI(t, url, "-n", "2", "--json", "--slo-ttft", c.bound, "--slo-tpot", "0")
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Goodput *Goodput }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		g := doc.Goodput
		if g == nil || g.Share != c.share || g.Requests != 2 || g.Good != int(2*c.share) || len(g.BoundsMS) != 1 ||
			g.GoodOutputTokens != int(4*c.share) || math.Abs(g.GoodOutputThroughput-float64(g.GoodOutputTokens)/g.DurationS) > 1e-9 {
			t.Errorf("--slo-ttft %s: goodput %+v", c.bound, g)
		}
	}
	out, _, err := runCLI(t, url, "-n", "1")
	if err != nil || !strings.Contains(out, "goodput 100.0% (1 of 1 requests meet TTFT ≤ 5s, TPOT ≤ 50ms)") {
		t.Errorf("default bounds (%v):\n%s", err, out)
	}
	out, _, err = runCLI(t, url, "-n", "1", "--csv", "--slo-ttft", "10ms")
	rows, _ := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][slices.Index(rows[0], "good")] != "false" {
		t.Errorf("csv good column (%v): %v", err, rows)
	}
	out, _, err = runCLI(t, url, "-n", "1", "--json", "--slo-ttft", "0", "--slo-tpot", "0")
	if err != nil || strings.Contains(out, `"goodput"`) {
		t.Errorf("goodput without bounds (%v): %s", err, out)
	}
	if _, _, err := runCLI(t, url, "--slo-ttft", "fast"); err == nil {
		t.Error("--slo-ttft fast accepted")
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
	if len(got) != 1 || got[0].Endpoint != "a" || got[0].Good != 3 || got[0].Share != 0.75 || got[0].DurationS != 4 ||
		got[0].GoodOutputThroughput != 7.5 {
		t.Errorf("results %+v", got)
	}
}
