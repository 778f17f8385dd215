package promql

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// gapFake serves model llama's TTFT chain, cumulative: 4 observations a
// second (1 of them under 0.1s, 0.2s each), with no point at the steps in
// missing (a step that came back without a sample). From resetAt on, when
// set, the counters start again from zero there (a restart in the gap).
// With start, the model is served by one replica, r1, whose process start
// (Unix seconds) at the fake's time start gives.
func gapFake(t *testing.T, missing map[int64]bool, resetAt int64, start func(now time.Time) float64) *fakeProm {
	t.Helper()
	f := newFakeProm(t, "llama")
	const origin = 999_000 // the series' counters are zero here
	cum := func(sec int64) float64 {
		if resetAt != 0 && sec >= resetAt {
			return float64(sec - resetAt)
		}
		return float64(sec - origin)
	}
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			inst := map[bool]string{true: "r1"}[start != nil]
			if start != nil && strings.HasSuffix(r.URL.Path, "/api/v1/query") {
				var ss []fakeSeries
				if strings.Contains(q, "(up)") {
					ss = []fakeSeries{{labels: map[string]string{"instance": inst}, value: 1},
						{labels: map[string]string{"instance": inst, "ttftop_part": "start"}, value: start(f.clock())}}
				}
				for _, x := range instantAnswer(q, []string{"llama"}, f.clock(), nil, func(string) time.Duration { return 0 }) {
					x.labels["instance"] = inst
					ss = append(ss, x)
				}
				writeVector(w, f.clock(), ss, nil, nil)
				return true
			}
			if !strings.HasSuffix(r.URL.Path, "query_range") || !strings.Contains(q, "time_to_first_token") {
				return false
			}
			begin, end, step := parseRange(r)
			lbl := func(kv ...string) map[string]string { return llamaLabels(inst, kv...) }
			parts := []struct {
				labels map[string]string
				per    float64 // per second
			}{{lbl("le", "0.1"), 1}, {lbl("le", "+Inf"), 4}, {lbl("ttftop_part", "sum"), 0.8}, {lbl("ttftop_part", "series"), 0}}
			res := []map[string]any{}
			for _, p := range parts {
				var vals [][]any
				for at := begin; !at.After(end) && step > 0; at = at.Add(step) {
					if missing[at.Unix()] {
						continue
					}
					v := p.per * cum(at.Unix())
					if p.per == 0 {
						v = 1 // one series summed
					}
					vals = append(vals, []any{promTime(at), promValue(v)})
				}
				res = append(res, map[string]any{"metric": p.labels, "values": vals})
			}
			writeSuccess(w, "matrix", res, nil, nil)
			return true
		}
	})
	return f
}

// runGap refreshes a source on f every 5s for two minutes and returns its
// TTFT windows and the warnings it gave.
func runGap(t *testing.T, f *fakeProm, name string) ([]telemetry.Observation, []string) {
	t.Helper()
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	var warnings []string
	for range 24 {
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		warnings = append(warnings, rec.status(t).Warnings...)
		clk.Add(5 * time.Second)
	}
	return rec.find(telemetry.KindHistogram, name, telemetry.TTFT), warnings
}

// A histogram step missing between two points (a scrape that failed or
// came late under load): the observations of the gap are the difference
// of the points on either side, as increase() counts them, all in the
// window after the gap. Before, that point was taken as a new baseline and
// the gap's requests left every figure, unsaid (issue 25: 20 of 24 counted).
func TestHistogramGapKeepsItsCounts(t *testing.T) {
	const gapAt = 1_000_060
	hs, warnings := runGap(t, gapFake(t, map[int64]bool{gapAt: true}, 0, nil), "llama")
	if len(hs) < 8 {
		t.Fatalf("%d TTFT windows over two minutes, want about 10", len(hs))
	}
	for _, w := range warnings {
		if strings.Contains(w, "skipped") {
			t.Errorf("warning %q: no window is skipped across a gap", w)
		}
	}
	var total float64
	for i, h := range hs {
		steps := 1.0
		if i > 0 {
			steps = h.At.Sub(hs[i-1].At).Seconds() / 10
		}
		if h.At.Unix() == gapAt {
			t.Errorf("a window ends at the missing step %d", gapAt)
		}
		if h.At.Unix() == gapAt+10 && steps != 2 {
			t.Errorf("the window after the gap follows the one ending %d, want %d", hs[i-1].At.Unix(), gapAt-10)
		}
		n, under, sum := h.Buckets[len(h.Buckets)-1].Count, h.Buckets[0].Count, h.Value
		if n != 40*steps || under != 10*steps || !within(sum, 8*steps, 1e-9) {
			t.Errorf("window ending %d over %v steps: %v observations, %v under 0.1s, sum %v; want %v, %v, %v",
				h.At.Unix(), steps, n, under, sum, 40*steps, 10*steps, 8*steps)
		}
		total += n
	}
	// Every observation from the first window's start to the last's end.
	if span := hs[len(hs)-1].At.Sub(hs[0].At).Seconds() + 10; total != 4*span {
		t.Errorf("%v observations counted over %vs, the store's increase is %v", total, span, 4*span)
	}
}

// A counter reset across the gap is still a reset: the window is skipped,
// said, and the chain goes on from the point after the gap; nothing of
// the new life is taken for the old one's.
func TestHistogramResetAcrossGap(t *testing.T) {
	const gapAt = 1_000_060
	hs, warnings := runGap(t, gapFake(t, map[int64]bool{gapAt: true}, gapAt, nil), "llama")
	checkSkippedAfterGap(t, hs, warnings, "counter reset for llama; one window skipped", gapAt)
}

// A replica whose process started anew in the gap, though no bucket went
// down (its counters outgrew the old life's): the difference across the
// gap mixes two lives, so that window is skipped, said, as for a reset.
func TestHistogramRestartInGap(t *testing.T) {
	const gapAt = 1_000_060
	f := gapFake(t, map[int64]bool{gapAt: true}, 0, func(now time.Time) float64 {
		if now.Unix() >= gapAt+2 { // seen at the first refresh after the new process's scrape
			return gapAt - 5
		}
		return 990_000
	})
	hs, warnings := runGap(t, f, "r1/llama")
	checkSkippedAfterGap(t, hs, warnings, "restart in a gap for r1/llama; one window skipped", gapAt)
}

// checkSkippedAfterGap checks that the window after the gap at gapAt was
// skipped with the warning want, and that every other window holds one
// step's 40 observations, up to after the gap.
func checkSkippedAfterGap(t *testing.T, hs []telemetry.Observation, warnings []string, want string, gapAt int64) {
	t.Helper()
	if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("warnings %q: want %q", warnings, want)
	}
	for _, h := range hs {
		n := h.Buckets[len(h.Buckets)-1].Count
		if h.At.Unix() == gapAt+10 {
			t.Errorf("a window ends after the gap at %d with %v observations: want it skipped", h.At.Unix(), n)
		} else if n != 40 {
			t.Errorf("window ending %d: %v observations, want 40", h.At.Unix(), n)
		}
	}
	if len(hs) == 0 || hs[len(hs)-1].At.Unix() <= gapAt+10 {
		t.Errorf("no window after the gap: the chain must go on from the point after it")
	}
}

// A gap longer than max_lag while the store lags past it: its steps are
// given up as no data, and once the store catches up the first point after
// the gap is differenced against the last before it, not taken as a new
// baseline: the gap's observations are counted in that window.
func TestHistogramGapPastMaxLagKeepsItsCounts(t *testing.T) {
	const gapFrom, gapTo = 1_000_060, 1_000_150
	missing := map[int64]bool{}
	for sec := int64(gapFrom); sec <= gapTo; sec += 10 {
		missing[sec] = true
	}
	f := gapFake(t, missing, 0, nil)
	clk := &fakeClock{t: time.Unix(1_000_003, 0)}
	f.set(func(f *fakeProm) { f.clock = clk.Now })
	cfg := testConfig(f.URL())
	cfg.MaxLag = time.Minute
	s, rec := newTestSource(t, cfg)
	s.now = clk.Now
	for range 40 {
		now := clk.Now().Unix()
		f.set(func(f *fakeProm) {
			f.lag = 0
			if now >= gapFrom-5 && now < gapTo+20 { // the store falls behind, past max_lag
				f.lag = time.Duration(now-gapFrom+7) * time.Second
			}
		})
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	if nd := rec.find(telemetry.KindNoData, "llama", telemetry.TTFT); len(nd) == 0 {
		t.Errorf("no step given up as no data: the store did not lag past max_lag, nothing tested")
	}
	hs := rec.find(telemetry.KindHistogram, "llama", telemetry.TTFT)
	var total float64
	after := false
	for _, h := range hs {
		n := h.Buckets[len(h.Buckets)-1].Count
		total += n
		if h.At.Unix() == gapTo+10 {
			after = true
			if want := 4.0 * (gapTo + 10 - (gapFrom - 10)); n != want {
				t.Errorf("window after the gap holds %v observations, want %v (the whole gap's)", n, want)
			}
		}
	}
	if !after {
		t.Fatalf("no window ends at %d, the first point after the gap", gapTo+10)
	}
	if span := hs[len(hs)-1].At.Sub(hs[0].At).Seconds() + 10; total != 4*span {
		t.Errorf("%v observations counted over %vs, the store's increase is %v", total, span, 4*span)
	}
}

// llamaLabels are the labels of a series of vLLM model llama on replica
// inst ("": none), with the label pairs kv.
func llamaLabels(inst string, kv ...string) map[string]string {
	m := map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}
	if inst != "" {
		m["instance"] = inst
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
