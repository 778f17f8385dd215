package monitor

import (
	"context"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// Quick mode against a server with LoRA adapters: /v1/models lists each
// adapter with its base as parent, each is probed by its own name (the
// simulator serves it on the base's engine), and its endpoint says which
// base it is an adapter of; the base itself says nothing of the kind.
func TestQuickModeProbesAdaptersUnderTheirBase(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := startSim(t, ctx, sim.Config{Models: []sim.ModelSpec{{Name: "base-8b", Params: 8e9, Adapters: []string{"sql-lora", "chat-lora"}}}})
	m := New(Options{EvalEvery: 50 * time.Millisecond})
	if err := m.AddProbe(probe.Options{URL: s.URL(), Interval: 100 * time.Millisecond, Timeout: 5 * time.Second}, ""); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	want := map[string]string{"base-8b": "", "sql-lora": "base-8b", "chat-lora": "base-8b"}
	waitFor(t, "the base and both adapters probed successfully", func() bool {
		snap := m.Store.Snapshot(time.Now(), time.Minute)
		ok := 0
		for _, ep := range snap.Endpoints {
			parent, listed := want[ep.Model]
			if !listed {
				t.Fatalf("unexpected endpoint %s (model %q)", ep.Name, ep.Model)
			}
			if got := ep.Labels["adapter_of"]; got != parent {
				t.Fatalf("%s: adapter_of %q, want %q", ep.Name, got, parent)
			}
			if v := ep.Signals[telemetry.TTFT]; v.State == telemetry.Live && v.Count > 0 {
				ok++
			}
		}
		return ok == len(want)
	})
}
