package probe_test

import (
	"context"
	"testing"
	"time"

	"github.com/tokentop/tokentop/internal/sim"
	"github.com/tokentop/tokentop/sources/probe"
	"github.com/tokentop/tokentop/telemetry"
)

// TestAgainstSimulator probes tokentop's own vLLM simulator end to end:
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
