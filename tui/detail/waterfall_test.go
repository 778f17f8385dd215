package detail

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
)

// TestWaterfall: each successful probe is one bar on a shared time
// scale, split where the engine said (queue, prefill, outside the engine)
// or, without engine timings, where the client saw it (headers, first
// token); failed probes are left out and the legend names each source.
func TestWaterfall(t *testing.T) {
	ctx := ctxFor("dark", t0)
	ctx.Glyphs = themes.NewGlyphs(true) // letters: countable, colour-free
	m := New(ctx)
	m.Open("ep")
	engine := telemetry.ProbeAt{At: t0, ProbeRecord: telemetry.ProbeRecord{OK: true, TTFTms: 500, E2Ems: 1500,
		Breakdown: []telemetry.ProbePart{
			{Part: "connect", MS: 10, Source: "client (before start)"},
			{Part: "headers", MS: 5, Source: "client"},
			{Part: "queue", MS: 100, Source: "server: vllm metrics.queue_time_ms"},
			{Part: "prefill", MS: 300, Source: "server: vllm metrics.time_to_first_token_ms"},
			{Part: "outside_to_first_token", MS: 100, Source: "derived: TTFT − queue − load − prefill"},
		}}}
	client := telemetry.ProbeAt{At: t0.Add(-10 * time.Second), ProbeRecord: telemetry.ProbeRecord{OK: true, TTFTms: 200, E2Ems: 1000,
		Breakdown: []telemetry.ProbePart{{Part: "headers", MS: 100, Source: "client"}}}}
	failed := telemetry.ProbeAt{At: t0.Add(-5 * time.Second), ProbeRecord: telemetry.ProbeRecord{OK: false, ErrorKind: "http"}}
	m.data = Data{Endpoint: "ep", Probes: []telemetry.ProbeAt{client, failed, engine}}
	const w = 100
	out := ansi.Strip(m.waterfall(w))
	lines := strings.Split(out, "\n")
	if len(lines) < 3 {
		t.Fatalf("waterfall:\n%s", out)
	}
	barW := float64(w - 10 - 8 - 2)
	scale := 1510.0 // the longest probe: set-up + E2E
	count := func(line string, glyph string) int { return strings.Count(line[10:10+int(barW)], glyph) }
	near := func(what string, got int, ms float64) {
		t.Helper()
		if want := ms / scale * barW; math.Abs(float64(got)-want) > 1.01 {
			t.Errorf("%s: %d cells, want %.1f\n%s", what, got, want, out)
		}
	}
	newest, older := lines[1], lines[2]
	near("set-up", count(newest, "."), 10)
	near("queue", count(newest, "q"), 100)
	near("prefill", count(newest, "p"), 300)
	near("outside engine", count(newest, "o"), 100)
	near("stream", count(newest, "#"), 1000)
	near("to headers", count(older, "h"), 100)
	near("to first token", count(older, "t"), 100)
	near("stream (client-only probe)", count(older, "#"), 800)
	if !strings.Contains(newest, "1.51s") || !strings.Contains(older, "1s") {
		t.Errorf("totals missing:\n%s", out)
	}
	if len(lines) != 3+7 { // heading, 2 bars, 7 legend entries
		t.Errorf("want 2 bars (the failed probe left out) and 7 legend lines, got:\n%s", out)
	}
	if !strings.Contains(out, "queue server: vllm metrics.queue_time_ms") {
		t.Errorf("legend does not name the queue's source:\n%s", out)
	}
}
