package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// TestAgainstSimulator probes ttftop's own vLLM simulator end to end:
// discovery, both OpenAI APIs, usage counts, plausible timings.
func TestAgainstSimulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := sim.New(sim.Config{Listen: "127.0.0.1:0", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, api := range []probe.API{probe.OpenAIChat, probe.OpenAICompletions} {
		p, err := probe.New(probe.Options{URL: s.URL(), API: api, MaxTokens: 16})
		if err != nil {
			t.Fatal(err)
		}
		models, err := p.Discover(ctx)
		if err != nil || len(models) == 0 || p.Model() != models[0].ID {
			t.Fatalf("%s: discover %v %v", api, models, err)
		}
		if e := p.Endpoint(); e.Engine != telemetry.EngineVLLM {
			t.Errorf("%s: engine %q, want vllm (owned_by)", api, e.Engine)
		}
		for i := range 3 {
			r := p.Do(ctx, nil)
			if !r.OK {
				t.Fatalf("%s request %d: %s: %s", api, i, r.ErrorKind, r.Err)
			}
			if r.TokensSource != probe.TokensUsage || r.OutputTokens < 1 || r.OutputTokens > 16 || r.Events < 1 {
				t.Errorf("%s: n %d (%s) events %d", api, r.OutputTokens, r.TokensSource, r.Events)
			}
			if r.TTFT <= 0 || r.TTFT > 5*time.Second || r.E2E < r.TTFT {
				t.Errorf("%s: ttft %v e2e %v", api, r.TTFT, r.E2E)
			}
			if tpot, ok := r.TPOT(); ok && (tpot <= 0 || tpot > time.Second) {
				t.Errorf("%s: tpot %v", api, tpot)
			}
		}
		p.Close()
	}
}

// A speculative-decoding model sends the tokens of one step in one event.
// With ContinuousUsage the probe asks vLLM's continuous_usage_stats and
// knows each event's tokens exactly (some above 1, summing to the usage
// count); without it the per-event counts are unknown, never taken as 1.
func TestContinuousUsageCountsTokensPerEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := sim.DefaultModels()[0]
	m.SpecTokens, m.SpecAcceptRate = 3, 0.9
	s, err := sim.New(sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{m}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, continuous := range []bool{true, false} {
		p, err := probe.New(probe.Options{URL: s.URL(), API: probe.OpenAIChat, MaxTokens: 48, ContinuousUsage: continuous})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		r := p.Do(ctx, nil)
		p.Close()
		if !r.OK {
			t.Fatalf("continuous %v: %s: %s", continuous, r.ErrorKind, r.Err)
		}
		if !continuous {
			if r.TokensPerEvent != nil && r.OutputTokens != r.Events {
				t.Errorf("without continuous usage: tokens per event %v for %d tokens in %d events, want unknown", r.TokensPerEvent, r.OutputTokens, r.Events)
			}
			continue
		}
		sum, most := 0, 0
		for _, n := range r.TokensPerEvent {
			sum, most = sum+n, max(most, n)
		}
		if len(r.TokensPerEvent) != r.Events || sum != r.OutputTokens || most < 2 {
			t.Errorf("continuous usage: tokens per event %v (sum %d, most %d) for %d tokens in %d events: want each event's count, some above 1",
				r.TokensPerEvent, sum, most, r.OutputTokens, r.Events)
		}
	}
}
