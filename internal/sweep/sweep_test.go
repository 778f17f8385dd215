package sweep

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

func f(v float64) *float64 { return &v }

func TestLevels(t *testing.T) {
	for maxC, want := range map[int][]int{1: {1}, 2: {1, 2}, 8: {1, 2, 4, 8}, 12: {1, 2, 4, 8, 12}} {
		if got := Levels(maxC); !slices.Equal(got, want) {
			t.Errorf("Levels(%d) = %v, want %v", maxC, got, want)
		}
	}
}

// result is a successful request: TTFT, then n tokens one per event,
// gap apart.
func result(start time.Time, seq int, ttft, gap time.Duration, n int) *probe.Result {
	r := &probe.Result{Seq: seq, Start: start, OK: true, TTFT: ttft, OutputTokens: n, Events: n, TokensSource: probe.TokensUsage}
	for i := range n {
		r.EventOffsets = append(r.EventOffsets, ttft+time.Duration(i)*gap)
		r.EventParts = append(r.EventParts, probe.PartAnswer)
	}
	r.E2E = r.EventOffsets[n-1]
	r.Duration = r.E2E
	return r
}

// Objectives are judged on the step's requests: percentiles at their
// percentile, ratios as shares, errors as rates; a signal without samples
// is not judged, and so not met.
func TestJudge(t *testing.T) {
	t0 := time.Now()
	var rs []*probe.Result
	for i := range 20 {
		rs = append(rs, result(t0, i+1, time.Duration(10+i)*time.Millisecond, 5*time.Millisecond, 10))
	}
	rs = append(rs, &probe.Result{Seq: 21, Start: t0, ErrorKind: probe.ErrTimeout})
	objs := []slo.Objective{
		{Name: "ttft", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 0.030},
		{Name: "ttft-tight", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.5, Threshold: 0.015},
		{Name: "tpot-ratio", Kind: slo.Ratio, Signal: telemetry.TPOT, Threshold: 0.006, Target: 0.9},
		{Name: "errors", Kind: slo.ErrorRate, Threshold: 0.01},
		{Name: "up", Kind: slo.Availability, Target: 0.9},
		{Name: "ttfa", Kind: slo.Percentile, Signal: telemetry.TTFA, Percentile: 0.95, Threshold: 1},
		{Name: "kv", Kind: slo.Percentile, Signal: telemetry.KVCache, Percentile: 0.95, Threshold: 0.9},
	}
	got := map[string]Judgement{}
	for _, j := range judge(objs, rs) {
		got[j.Objective] = j
	}
	check := func(name string, value float64, met bool) {
		t.Helper()
		j, ok := got[name]
		if !ok || j.Value == nil || j.Met == nil || *j.Met != met || *j.Value < value-1e-6 || *j.Value > value+1e-6 {
			t.Errorf("%s: %+v, want value %v met %v", name, j, value, met)
		}
	}
	check("ttft", 28.05, true)         // p95 of 10..29 ms
	check("ttft-tight", 19.5, false)   // median
	check("tpot-ratio", 20.0/21, true) // the failed request misses
	check("errors", 1.0/21, false)
	check("up", 20.0/21, true)
	check("ttfa", 28.05, true) // no reasoning: the answer is the first token
	if r, l := got["tpot-ratio"], got["ttft"]; r.Limit != "min" || r.Threshold != 0.9 || r.LatencyMS != 6 ||
		l.Limit != "max" || l.Threshold != 30 || l.Unit != "ms" || got["errors"].Limit != "max" || got["up"].Threshold != 0.9 {
		t.Errorf("limits: ratio %+v, percentile %+v", r, l)
	}
	if _, ok := got["kv"]; ok {
		t.Error("a server-side signal was judged on client requests")
	}
	if j := judge(objs[:1], nil)[0]; j.Value != nil || j.Met != nil {
		t.Errorf("no requests: %+v, want not judged", j)
	}
}

// The knee is the end of the leading run of steps that meet everything.
func TestKnee(t *testing.T) {
	steps := []Step{{Concurrency: 1, MeetsObjectives: true}, {Concurrency: 2, MeetsObjectives: true},
		{Concurrency: 4}, {Concurrency: 8, MeetsObjectives: true}}
	if k := kneeOf(steps); k == nil || k.Concurrency != 2 {
		t.Errorf("knee %+v, want 2", k)
	}
	if k := kneeOf(steps[2:]); k != nil {
		t.Errorf("knee %+v, want none", k)
	}
	// A step held below 90 % of its concurrency carried less load than
	// its name: it meets its objectives, yet is no knee.
	held := []Step{{Concurrency: 1, MeetsObjectives: true, AchievedConcurrency: f(1)},
		{Concurrency: 2, MeetsObjectives: true, AchievedConcurrency: f(1.7)}}
	if k := kneeOf(held); k == nil || k.Concurrency != 1 {
		t.Errorf("knee %+v, want 1: concurrency 2 ran with 1.7 in flight", k)
	}
}

// A held-back step ends the sweep and is reported; an objective far
// exceeded in that step is the reason given first.
func TestStopAfterHeldBack(t *testing.T) {
	cfg := Config{MaxConcurrency: 64, StopFactor: 2}
	limits := probe.Limits{MaxConcurrency: 64, MaxPerMinute: 600}
	full := Step{Concurrency: 1, AchievedConcurrency: f(1)}
	held := Step{Concurrency: 2, AchievedConcurrency: f(1.2), HeldBackBy: HeldByRateCeiling}
	if r, h := stopAfter([]Step{full}, cfg, limits); r != "" || h != nil {
		t.Errorf("a full step stopped: %q %+v", r, h)
	}
	r, h := stopAfter([]Step{full, held}, cfg, limits)
	if h == nil || *h != (HeldBack{Concurrency: 2, InFlight: 1.2, By: HeldByRateCeiling}) ||
		r != "concurrency 2 held back to 1.2 in flight by the requests-per-minute ceiling (600 a minute), short of the maximum concurrency 64" {
		t.Errorf("held back: %q %+v", r, h)
	}
	// Throughput held by the ceiling is not over-saturation.
	held.OutputTPS, held.TTFTp95ms, full.OutputTPS, full.TTFTp95ms = f(105), f(30), f(100), f(10)
	if r, _ := stopAfter([]Step{full, held}, cfg, limits); !strings.HasPrefix(r, "concurrency 2 held back") {
		t.Errorf("held back with flat throughput: %q", r)
	}
	held.Objectives = []Judgement{{Objective: "errors", Over: f(10)}}
	if r, h := stopAfter([]Step{full, held}, cfg, limits); h == nil || !strings.HasPrefix(r, "objective errors far exceeded at concurrency 2") {
		t.Errorf("held back and far over: %q %+v", r, h)
	}
}

// The sweep's own start-rate ceiling grows with the concurrency, so a
// closed loop of ordinary requests reaches it; the probe's 600 a minute
// stays the floor and the absolute ceiling the cap.
func TestDefaultMaxPerMinute(t *testing.T) {
	for c, want := range map[int]int{1: 600, 16: 9600, 128: probe.AbsoluteMaxPerMinute} {
		if got := DefaultMaxPerMinute(c); got != want {
			t.Errorf("DefaultMaxPerMinute(%d) = %d, want %d", c, got, want)
		}
	}
}

// A rate ceiling that cannot start requests as fast as the closed loop
// finishes them holds the step back: the sweep stops there, says so, and
// the knee is a step below it, though every step met its objectives.
func TestSweepHeldBackByRateCeiling(t *testing.T) {
	url := startSim(t, simModel(64))
	objs := []slo.Objective{{Name: "errors", Kind: slo.ErrorRate, Threshold: 0.5}}
	cfg := quickConfig(url, 16, objs)
	// ~100 ms requests: 1 stream starts 600 a minute, 4 would need 2,400.
	cfg.Probe.MaxTokens = 32
	cfg.Probe.Limits.MaxPerMinute = 1200
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := rep.HeldBack
	// On a loaded machine the client itself may start requests late before
	// the ceiling bites: either way the step is held back and said so
	// (TestHeldBackBy pins which one is named from the start times).
	if h == nil || h.Concurrency > 4 || h.Concurrency < 2 || h.InFlight >= 0.9*float64(h.Concurrency) ||
		(h.By != HeldByRateCeiling && h.By != HeldByClient) || !strings.Contains(rep.Stop, "held back") ||
		h.By == HeldByRateCeiling && !strings.Contains(rep.Stop, "requests-per-minute ceiling (1200 a minute)") {
		t.Fatalf("held back %+v, stop %q, steps %+v", h, rep.Stop, rep.Steps)
	}
	if last := rep.Steps[len(rep.Steps)-1]; last.Concurrency != h.Concurrency || !last.MeetsObjectives {
		t.Errorf("the sweep went on past the held-back step, or it missed: %+v", rep.Steps)
	}
	if rep.Knee == nil || rep.Knee.Concurrency >= h.Concurrency {
		t.Errorf("knee %+v at or above the held-back concurrency %d", rep.Knee, h.Concurrency)
	}
	if rep.Limits.MaxPerMinute != 1200 {
		t.Errorf("limits %+v", rep.Limits)
	}
}

func TestStopReason(t *testing.T) {
	step := func(c int, tps, ttft float64) Step {
		return Step{Concurrency: c, OutputTPS: f(tps), TTFTp95ms: f(ttft)}
	}
	growing := []Step{step(1, 100, 10), step(2, 190, 12)}
	if r := stopReason(growing, 2); r != "" {
		t.Errorf("healthy growth stopped: %s", r)
	}
	flat := []Step{step(4, 400, 20), step(8, 420, 45)}
	if r := stopReason(flat, 2); !strings.Contains(r, "over-saturated at concurrency 8") {
		t.Errorf("flat throughput, TTFT ×2.25: %q", r)
	}
	flatFast := []Step{step(4, 400, 20), step(8, 420, 25)}
	if r := stopReason(flatFast, 2); r != "" {
		t.Errorf("flat throughput without TTFT growth stopped: %s", r)
	}
	far := []Step{{Concurrency: 1, Objectives: []Judgement{{Objective: "tpot-p95", Over: f(2.5)}}}}
	if r := stopReason(far, 2); !strings.Contains(r, "tpot-p95 far exceeded") {
		t.Errorf("2.5× over: %q", r)
	}
	if r := stopReason(far, 3); r != "" {
		t.Errorf("2.5× over with factor 3 stopped: %s", r)
	}
}

// Throughput counts the tokens that arrived inside the window, whichever
// request they belong to; in-flight time is clipped to it.
func TestWindowCounts(t *testing.T) {
	t0 := time.Now()
	// Two requests of 10 tokens, one event every 10 ms from 10 ms.
	a := result(t0, 1, 10*time.Millisecond, 10*time.Millisecond, 10)
	b := result(t0.Add(50*time.Millisecond), 2, 10*time.Millisecond, 10*time.Millisecond, 10)
	w0, w1 := t0.Add(50*time.Millisecond), t0.Add(100*time.Millisecond)
	// a: tokens at 50..100 ms → 6; b: at 60..100 → 5.
	if got := tokensWithin([]*probe.Result{a, b}, w0, w1); got != 11 {
		t.Errorf("tokens in window %v, want 11", got)
	}
	// a busy 50..100 (its E2E is 100 ms), b 50..100: 2 × 50 ms.
	if got := busyWithin([]*probe.Result{a, b}, w0, w1); got < 0.0999 || got > 0.1001 {
		t.Errorf("busy %v s, want 0.1", got)
	}
}

func TestTTFTRising(t *testing.T) {
	t0 := time.Now()
	var flat, rising []*probe.Result
	for i := range 30 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		flat = append(flat, result(at, i+1, time.Duration(20+i%3)*time.Millisecond, time.Millisecond, 2))
		rising = append(rising, result(at, i+1, time.Duration(20+4*i+i%3)*time.Millisecond, time.Millisecond, 2))
	}
	if ttftRising(flat) {
		t.Error("flat TTFT read as rising")
	}
	if !ttftRising(rising) {
		t.Error("TTFT rising 20 → 136 ms not detected")
	}
}

func startSim(t *testing.T, spec sim.ModelSpec) string {
	t.Helper()
	return simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{spec}}).URL()
}

// simModel: a 3 ms step, at most maxBatch sequences at once.
func simModel(maxBatch int) sim.ModelSpec {
	const peak, eff, step = 3.35e12, 0.5, 0.003
	return sim.ModelSpec{Name: "m", Params: step * peak * eff / 2, DtypeBytes: 2, KVBytesPerToken: 1024,
		GPU: "H100 SXM", Efficiency: eff, PrefillTokensPerSec: 1e6, MaxBatch: maxBatch, MaxQueue: 64, MaxBatchedTokens: 2048}
}

func quickConfig(url string, maxC int, objs []slo.Objective) Config {
	return Config{
		Probe:          probe.Options{URL: url, MaxTokens: 16, Limits: probe.Limits{MaxConcurrency: maxC, MaxPerMinute: 60000}},
		MaxConcurrency: maxC, Objectives: objs, MinRequests: 8, MaxStepTime: 5 * time.Second, Tolerance: 0.25,
	}
}

// An engine that runs two sequences at a time saturates: past 2 streams
// its throughput stays flat while requests queue, so TTFT doubles with
// each doubling of concurrency and the sweep stops there.
func TestSweepStopsAtSaturation(t *testing.T) {
	url := startSim(t, simModel(2))
	var updates int
	cfg := quickConfig(url, 32, nil)
	cfg.Progress = func(Progress) { updates++ }
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := len(rep.Steps)
	if !strings.Contains(rep.Stop, "over-saturated") || n < 3 || rep.Steps[n-1].Concurrency >= 32 {
		t.Fatalf("stop %q after %d steps: %+v", rep.Stop, n, rep.Steps)
	}
	if rep.Knee != nil || updates < n {
		t.Errorf("knee %+v without objectives; %d progress updates for %d steps", rep.Knee, updates, n)
	}
	if rep.Source == "" || rep.Model != "m" {
		t.Errorf("report %+v", rep)
	}
}

// A TPOT objective the engine cannot meet at all ends the sweep at the
// first step: no knee, and no snippet to print.
func TestSweepStopsWhenFarExceeded(t *testing.T) {
	url := startSim(t, simModel(64))
	objs := []slo.Objective{{Name: "tpot-p95", Kind: slo.Percentile, Signal: telemetry.TPOT, Percentile: 0.95, Threshold: 0.001}}
	rep, err := Run(context.Background(), quickConfig(url, 8, objs))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 1 || rep.Knee != nil || !strings.Contains(rep.Stop, "tpot-p95 far exceeded at concurrency 1") {
		t.Fatalf("stop %q, knee %+v, steps %+v", rep.Stop, rep.Knee, rep.Steps)
	}
	if _, err := TriggerOf(rep, "2m"); err == nil {
		t.Error("a trigger without a knee")
	}
}

// The ceilings are the probe's: a sweep past them is refused, not clamped.
func TestSweepRespectsCeilings(t *testing.T) {
	cfg := quickConfig("http://127.0.0.1:1", 8, nil)
	cfg.Probe.Limits.MaxConcurrency = 4
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "ceiling") {
		t.Errorf("sweep to 8 under a ceiling of 4: %v", err)
	}
}

// The in-step saturation rule also needs flat throughput: tokens arriving
// as fast in the step's second half as in its first (a server serving
// more as TTFT rises is warming up, not falling behind).
func TestThroughputFlat(t *testing.T) {
	t0 := time.Now()
	build := func(gap func(i int) time.Duration) *stepRun {
		m := &stepRun{c: 1}
		at := t0
		for i := range 10 {
			r := result(at, i+2, time.Millisecond, gap(i), 10)
			m.all, m.judged = append(m.all, r), append(m.judged, r)
			at = at.Add(r.Duration)
		}
		return m
	}
	if m := build(func(int) time.Duration { return 10 * time.Millisecond }); !m.throughputFlat() {
		t.Error("steady token rate read as rising")
	}
	if m := build(func(i int) time.Duration { return time.Duration(20-2*i) * time.Millisecond }); m.throughputFlat() {
		t.Error("a token rate rising 2 → 10 per 20 ms read as flat")
	}
}

// Starts 100 ms apart run at a 600-a-minute ceiling, though the window
// ends a request's duration after the last start; starts further apart,
// with 429s among them, were held back by the server; else by the client.
func TestHeldBackBy(t *testing.T) {
	t0 := time.Now()
	build := func(gap time.Duration, kind probe.ErrorKind) *stepRun {
		m := &stepRun{c: 2, cfg: Config{Probe: probe.Options{Limits: probe.Limits{MaxPerMinute: 600}}}}
		for i := range 8 {
			r := result(t0.Add(time.Duration(i)*gap), i+1, 10*time.Millisecond, 60*time.Millisecond, 7) // 370 ms
			if i == 3 {
				r.ErrorKind = kind
			}
			m.all = append(m.all, r)
		}
		return m
	}
	window := func(m *stepRun) (time.Time, time.Time) {
		last := m.all[len(m.all)-1]
		return t0, last.Start.Add(last.Duration)
	}
	for _, c := range []struct {
		gap  time.Duration
		kind probe.ErrorKind
		want Holder
	}{
		{100 * time.Millisecond, "", HeldByRateCeiling},
		{300 * time.Millisecond, probe.ErrRateLimited, HeldByServer},
		{300 * time.Millisecond, "", HeldByClient},
	} {
		m := build(c.gap, c.kind)
		if got := m.heldBackBy(window(m)); got != c.want {
			t.Errorf("starts %s apart (%q): held back by %q, want %q", c.gap, c.kind, got, c.want)
		}
	}
}
