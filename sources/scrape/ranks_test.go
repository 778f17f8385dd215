package scrape

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// A model served by two data-parallel ranks, rank 1 slowed to a fifth of
// its bandwidth: the scrape gives the model's row and one row per rank
// under it. Each rank's request count is what its engine counted, the
// model's is their sum; the slowed rank's ITL shows apart; the model's
// gauges are the ranks' sum (running, waiting) and the fullest rank (KV).
// In vLLM's labels (engine) and SGLang's (dp_rank).
func TestScrapeDataParallelRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulator for a second")
	}
	for _, format := range []string{sim.FormatVLLM, sim.FormatSGLang} {
		t.Run(format, func(t *testing.T) { testScrapeRanks(t, format) })
	}
}

func testScrapeRanks(t *testing.T, format string) {
	spec := simModels()[0]
	spec.DPRanks = 2
	one1 := 1
	srv, err := sim.New(sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{spec}, MetricsFormat: format,
		Scenario: sim.Scenario{Events: []sim.Event{{Kind: sim.EventBandwidth, Factor: 0.2, Rank: &one1}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, clk := &collector{}, newClock()
	s := New(Config{URL: srv.URL(), Now: clk.Now}, c)
	scrapeNow := func() []telemetry.Observation {
		t.Helper()
		clk.Advance(2 * time.Second)
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c.Take()
	}
	scrapeNow() // the baseline
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const short, long = 8, 2
	var streams []*sim.Stream
	for i := range short + long {
		n := 12
		if i >= short {
			n = 5000 // still running at the scrape
		}
		st, err := srv.Generate(ctx, sim.Request{Model: spec.Name, PromptTokens: 16, MaxTokens: n, IgnoreEOS: true})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	for i, st := range streams {
		for {
			toks, finish, err := st.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if finish != "" || i >= short && len(toks) > 0 {
				break // finished, or a long one has its first token
			}
		}
	}
	// A running request's first token reaches its client just before its
	// engine counts it: wait for the counts (polling, with a deadline).
	counted := map[int]uint64{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var sum uint64
		for _, st := range srv.Stats() {
			counted[st.Rank] = st.FirstTokens
			sum += st.FirstTokens
		}
		if sum == short+long {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engines counted %d first tokens of %d requests", sum, short+long)
		}
	}
	obs := scrapeNow()

	model := strings.TrimPrefix(srv.URL(), "http://") + "/" + spec.Name
	ranks := []string{model + " [dp 0]", model + " [dp 1]"}
	if got, want := strings.Join(endpoints(obs), " | "), strings.Join(append([]string{model}, ranks...), " | "); got != want {
		t.Fatalf("endpoints %s, want %s", got, want)
	}
	for r, name := range ranks {
		info := one(t, obs, telemetry.KindEndpoint, name, "").Info
		if info.Group != model || info.Labels[telemetry.LabelRank] != []string{"0", "1"}[r] || !info.IsRank() {
			t.Errorf("%s: group %q, labels %v; want a rank of %s", name, info.Group, info.Labels, model)
		}
	}
	count := func(name string, sig telemetry.Signal) (n, mean float64) {
		h := one(t, obs, telemetry.KindHistogram, name, sig)
		if len(h.Buckets) == 0 {
			t.Fatalf("%s %s: a histogram without buckets", name, sig)
		}
		n = h.Buckets[len(h.Buckets)-1].Count
		return n, h.Value / n
	}
	var rankSum float64
	for r, name := range ranks {
		n, _ := count(name, telemetry.TTFT)
		if n != float64(counted[r]) || n == 0 {
			t.Errorf("rank %d: TTFT count %v, its engine counted %d", r, n, counted[r])
		}
		rankSum += n
	}
	if n, _ := count(model, telemetry.TTFT); n != rankSum || n != short+long {
		t.Errorf("model's TTFT count %v, ranks' sum %v, requests %d", n, rankSum, short+long)
	}
	_, itl0 := count(ranks[0], telemetry.ITL)
	_, itl1 := count(ranks[1], telemetry.ITL)
	if itl1 < 3*itl0 {
		t.Errorf("ITL mean %.2f ms on the slowed rank, %.2f ms on the other: want it ≥ 3×", itl1*1e3, itl0*1e3)
	}
	t.Logf("ITL mean: rank 0 %.2f ms, rank 1 (slowed) %.2f ms; TTFT counts %d + %d", itl0*1e3, itl1*1e3, counted[0], counted[1])
	value := func(name string, sig telemetry.Signal) float64 {
		return one(t, obs, telemetry.KindSample, name, sig).Value
	}
	for _, sig := range []telemetry.Signal{telemetry.Running, telemetry.Waiting} {
		if m, r0, r1 := value(model, sig), value(ranks[0], sig), value(ranks[1], sig); m != r0+r1 {
			t.Errorf("%s: model %v, ranks %v + %v", sig, m, r0, r1)
		}
	}
	if m, r0, r1 := value(model, telemetry.KVCache), value(ranks[0], telemetry.KVCache), value(ranks[1], telemetry.KVCache); m != math.Max(r0, r1) {
		t.Errorf("KV: model %v, ranks %v and %v: want the fullest", m, r0, r1)
	}
	if m, r0, r1 := value(model, telemetry.OutputTPS), value(ranks[0], telemetry.OutputTPS), value(ranks[1], telemetry.OutputTPS); math.Abs(m-(r0+r1)) > 1e-9*m || m == 0 {
		t.Errorf("tok/s: model %v, ranks %v + %v", m, r0, r1)
	}
	if r := value(model, telemetry.Running); r != long {
		t.Errorf("running %v at the scrape, want the %d long requests", r, long)
	}
}

// A page with one engine label value (a real V1 capture, engine="0")
// is one model's row, no rank rows.
func TestScrapeOneRankNoRankRows(t *testing.T) {
	tg := newTarget(t, readFixture(t, "vllm-v0.27-xpu-specdecode-mfu-metrics.txt"))
	c := &collector{}
	if err := New(Config{URL: tg.URL}, c).ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if eps := endpoints(c.Take()); len(eps) != 1 || strings.Contains(eps[0], "[dp") {
		t.Errorf("endpoints %v, want the model's only", eps)
	}
}
