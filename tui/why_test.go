package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/ttftop/ttftop/diagnosis"
)

// fixedDiagnoses is a scripted diagnoser.
type fixedDiagnoses map[string]diagnosis.Diagnosis

func (f fixedDiagnoses) Latest() map[string]diagnosis.Diagnosis { return f }

func f64(v float64) *float64 { return &v }

// fixtureDiagnoses: qwen-72b's full KV cache makes requests queue (two
// causes, root first), deepseek-r1's prefill grew, llama-8b is healthy.
func fixtureDiagnoses() fixedDiagnoses {
	return fixedDiagnoses{
		"qwen-72b": {At: tNow, Causes: []diagnosis.Finding{
			{Cause: diagnosis.KVCache, Summary: "KV cache full: preempting", Since: tNow.Add(-100 * time.Second),
				Evidence: []diagnosis.Evidence{
					{Figure: "kv_cache_pct", Stat: "value", Value: 97, Unit: "%", Baseline: f64(90), BaselineFrom: "ratio", Source: "scrape:qwen"},
					{Figure: "preemptions_per_s", Stat: "value", Value: 2.5, Unit: "/s", Baseline: f64(0), BaselineFrom: "own", Source: "scrape:qwen"}},
				Next: "lower max_num_seqs or max_model_len, raise gpu_memory_utilization, or add replicas"},
			{Cause: diagnosis.Queueing, Summary: "queueing: requests wait for a slot", Since: tNow.Add(-90 * time.Second),
				Evidence: []diagnosis.Evidence{{Figure: "queue_time_ms", Stat: "mean", Value: 640, Unit: "ms", Baseline: f64(12), BaselineFrom: "own"}},
				Next:     "saturated: add replicas or shed load"}},
			Decomposition: diagnosis.Decomposition{ClientTTFTMs: f64(930), ServerTTFTMs: f64(900), ServerStat: "mean",
				NetworkMs: f64(30), QueueMs: f64(640), PrefillMs: f64(250), TPOTMs: f64(41), TPOTFloorMs: f64(27),
				MBUPct: f64(66), FloorFrom: "measured", Running: f64(48)}},
		"deepseek-r1": {At: tNow, Causes: []diagnosis.Finding{
			{Cause: diagnosis.Prefill, Summary: "prefill: prompt processing grew", Since: tNow.Add(-15 * time.Second),
				Evidence: []diagnosis.Evidence{{Figure: "prefill_time_ms", Stat: "mean", Value: 280, Unit: "ms", Baseline: f64(90), BaselineFrom: "own"}},
				Next:     "prompts grew (which clients?) or each token prefills slower"}}},
		"llama-8b": {At: tNow, Causes: []diagnosis.Finding{{Cause: diagnosis.None, Summary: "healthy"}}},
	}
}

func whyOptions() Options {
	o := testOptions()
	o.Diagnosis = fixtureDiagnoses()
	return o
}

var whySizes = [][2]int{{80, 24}, {160, 50}}

// The leading cause is on each unwell endpoint's alert line at both
// sizes, with how many more causes; a healthy or resolved one has none;
// the line under the table says why for the selected row.
func TestGoldenWhyMain(t *testing.T) {
	for _, sz := range whySizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := start(t, whyOptions(), sz[0], sz[1])
			waitOut(t, tm, "qwen-72b")
			send(tm, "/", "q", "w", "e", "n", "-", "7", "enter")
			waitOut(t, tm, "1 of 7")
			frame := finishFrame(t, tm)
			for _, want := range []string{"kv_cache", "qwen-72b: why: KV cache full"} {
				if sz[0] == 160 && want == "kv_cache" {
					want = "why: KV cache full: preempting +1"
				}
				if !strings.Contains(frame, want) {
					t.Errorf("frame lacks %q:\n%s", want, frame)
				}
			}
			for _, l := range strings.Split(frame, "\n") {
				if strings.Contains(l, "RESOLVED") && strings.Contains(l, "why") {
					t.Errorf("a resolved alert names a cause: %q", l)
				}
			}
			golden.RequireEqual(t, []byte(frame))
		})
	}
}

// The detail view's why section: the latency's terms, each cause with its
// evidence against its baseline, since when and the next step.
func TestGoldenWhyDetail(t *testing.T) {
	for _, sz := range whySizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := start(t, whyOptions(), sz[0], sz[1])
			waitOut(t, tm, "qwen-72b")
			send(tm, "/", "q", "w", "e", "n", "-", "7", "enter", "enter")
			waitOut(t, tm, "next saturated")
			frame := finishFrame(t, tm)
			for _, want := range []string{"why", "network 30ms", "queue 640ms", "kv_cache KV cache full", "97% vs 90% (ratio)", "next lower max_num_seqs"} {
				if !strings.Contains(frame, want) {
					t.Errorf("frame lacks %q:\n%s", want, frame)
				}
			}
			golden.RequireEqual(t, []byte(frame))
		})
	}
}

// `e` lists why each unwell endpoint is unwell, first.
func TestGoldenWhyProblems(t *testing.T) {
	tm := start(t, whyOptions(), 120, 40)
	waitOut(t, tm, "qwen-72b")
	send(tm, "e")
	waitOut(t, tm, "why endpoints are unwell")
	frame := finishFrame(t, tm)
	for _, want := range []string{"deepseek-r1", "prefill_time_ms mean 280ms vs 90ms (own)", "queueing requests wait for a slot"} {
		if !strings.Contains(frame, want) {
			t.Errorf("frame lacks %q:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "healthy") {
		t.Errorf("a healthy endpoint is listed:\n%s", frame)
	}
	golden.RequireEqual(t, []byte(frame))
}
