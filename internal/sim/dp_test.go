package sim

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A model served by two data-parallel ranks, the second slowed by a
// scenario event for rank 1 only: requests one after another spread over
// both ranks, each rank counts its own requests under its engine label,
// the slowed rank's steps are longer, and the model is listed once.
func TestDataParallelRanks(t *testing.T) {
	spec := stepModel("dp", 5*time.Millisecond, 1e6)
	spec.DPRanks = 2
	one := 1
	s, _ := newTestServer(t, Config{Models: []ModelSpec{spec}, Scenario: Scenario{Events: []Event{
		{Kind: EventBandwidth, Factor: 0.2, Model: "dp", Rank: &one}}}})
	const n = 6
	var streams []*Stream
	for range n {
		st, err := s.Generate(context.Background(), Request{Model: "dp", PromptTokens: 8, MaxTokens: 10, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	for _, st := range streams {
		drain(t, st)
	}
	stats := s.Stats()
	if len(stats) != 2 || stats[0].Rank != 0 || stats[1].Rank != 1 {
		t.Fatalf("stats %+v, want one per rank", stats)
	}
	page := pageOf(t, s.Handler())
	var itl [2]float64
	for r, st := range stats {
		if st.FirstTokens == 0 {
			t.Errorf("rank %d served no request (%d and %d)", r, stats[0].FirstTokens, stats[1].FirstTokens)
		}
		lbl := map[string]string{"engine": []string{"0", "1"}[r], "model_name": "dp"}
		if got := metricValue(t, page, "vllm:time_to_first_token_seconds", lbl).GetHistogram().GetSampleCount(); got != st.FirstTokens {
			t.Errorf("rank %d: TTFT count %d on the page, engine counted %d", r, got, st.FirstTokens)
		}
		h := metricValue(t, page, "vllm:inter_token_latency_seconds", lbl).GetHistogram()
		itl[r] = h.GetSampleSum() / float64(h.GetSampleCount())
	}
	if sum := stats[0].FirstTokens + stats[1].FirstTokens; sum != n {
		t.Errorf("ranks counted %d requests, sent %d", sum, n)
	}
	if itl[1] < 3*itl[0] {
		t.Errorf("ITL mean %.2f ms on the slowed rank, %.2f ms on the other: want it ≥ 3×", itl[1]*1e3, itl[0]*1e3)
	}
	if m := s.Models(); len(m) != 1 || m[0].DPRanks != 2 {
		t.Errorf("Models() %+v, want the model once", m)
	}
}

// An event for a rank no model has is refused, naming the rank.
func TestEventForMissingRankRefused(t *testing.T) {
	two := 2
	_, err := New(Config{Models: []ModelSpec{stepModel("m", 5*time.Millisecond, 1e6)},
		Scenario: Scenario{Events: []Event{{Kind: EventOutage, Rank: &two}}}})
	if err == nil || !strings.Contains(err.Error(), "no model has rank 2") {
		t.Fatalf("New: %v, want the missing rank refused", err)
	}
}

// drain reads a stream to its end.
func drain(t *testing.T, st *Stream) {
	t.Helper()
	for {
		_, finish, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if finish != "" {
			return
		}
	}
}
