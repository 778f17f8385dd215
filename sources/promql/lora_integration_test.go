//go:build integration

package promql

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestIntegrationLoRAAdapters: two simulated replicas of one base model
// serving LoRA adapters, and a page written as vLLM writes
// lora_requests_info (a series per change, the newest counting), behind a
// real Prometheus. Each replica's running and waiting adapters are those
// of the requests it holds (replica A: sql-lora and chat-lora running;
// replica B, one sequence at a time: doc-lora running, sql-lora waiting);
// the model row counts the distinct adapters of both (3 running, 1
// waiting); the vLLM-shaped page's newest series wins over its older ones.
func TestIntegrationLoRAAdapters(t *testing.T) {
	ctx := promIntegration(t)
	base := func(maxBatch int) sim.Config {
		return sim.Config{Listen: "127.0.0.1:0", Seed: 3, Models: []sim.ModelSpec{{Name: "org/base",
			Adapters: []string{"sql-lora", "chat-lora", "doc-lora"}, Params: 8.03e9, GPU: "H100 SXM", MaxBatch: maxBatch}}}
	}
	a, b := simtest.Start(t, base(8)), simtest.Start(t, base(1))
	hold := func(s *sim.Server, adapter string) {
		st, err := s.Generate(ctx, sim.Request{Model: adapter, PromptTokens: 16, MaxTokens: 8000, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
	}
	hold(a, "sql-lora")
	hold(a, "chat-lora")
	hold(b, "doc-lora")
	hold(b, "sql-lora") // waits: B runs one sequence at a time

	// vLLM keeps every label set it wrote: three changes, the newest last
	// in time (not in order).
	static := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="org/static"} 2.0
# TYPE vllm:lora_requests_info gauge
vllm:lora_requests_info{max_lora="4",running_lora_adapters="x",waiting_lora_adapters=""} 1.7907e+09
vllm:lora_requests_info{max_lora="4",running_lora_adapters="x,y",waiting_lora_adapters="z"} 1.7907001e+09
vllm:lora_requests_info{max_lora="4",running_lora_adapters="",waiting_lora_adapters=""} 1.7906e+09
`)
	}))
	defer static.Close()

	prom := promtest.Start(t, promtest.Target{Job: "a", URL: a.URL() + "/metrics"}, promtest.Target{Job: "b", URL: b.URL() + "/metrics"},
		promtest.Target{Job: "static", URL: static.URL + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, `vllm:lora_requests_info{running_lora_adapters!=""}`, 3, 30*time.Second)

	rec, until := sourceOver(t, ctx, prom)
	replicaA, replicaB := strings.TrimPrefix(a.URL(), "http://"), strings.TrimPrefix(b.URL(), "http://")
	want := map[string][2]float64{"org/base": {3, 1}, "org/static": {2, 1}, replicaA: {2, 0}, replicaB: {1, 1}}
	got := func() map[string][2]float64 {
		out := map[string][2]float64{}
		names := map[string]string{} // endpoint name → model row, or the replica's address
		for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
			key := o.Info.Model
			if o.Info.Group != "" {
				key = o.Info.Replica
			}
			names[o.Endpoint] = key
		}
		for i, sig := range []telemetry.Signal{telemetry.LoRARunning, telemetry.LoRAWaiting} {
			for _, o := range rec.find(telemetry.KindSample, "", sig) {
				v := out[names[o.Endpoint]]
				v[i] = o.Value
				out[names[o.Endpoint]] = v
			}
		}
		return out
	}
	until("adapter counts", func() bool {
		g := got()
		for k, v := range want {
			if g[k] != v {
				return false
			}
		}
		t.Logf("adapters running/waiting: %v", g)
		return true
	}, func() string { return fmt.Sprintf("adapters running/waiting %v, want %v", got(), want) })
}
