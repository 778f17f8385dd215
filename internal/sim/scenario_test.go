package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseScenarioYAML(t *testing.T) {
	sc, err := ParseScenario(strings.NewReader(`
events:
  - at: 30s
    kind: bandwidth
    model: m
    factor: 0.25
    for: 45s
  - at: 60s
    kind: prefill_slow
    factor: 5
  - at: 2m
    kind: outage
    for: 30s
  - at: 10s
    kind: burst
    streams: 20
    for: 15s
    every: 1m
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{At: 30 * time.Second, Kind: EventBandwidth, Model: "m", Factor: 0.25, For: 45 * time.Second},
		{At: time.Minute, Kind: EventPrefillSlow, Factor: 5},
		{At: 2 * time.Minute, Kind: EventOutage, For: 30 * time.Second},
		{At: 10 * time.Second, Kind: EventBurst, Streams: 20, For: 15 * time.Second, Every: time.Minute},
	}
	if len(sc.Events) != len(want) {
		t.Fatalf("events %+v", sc.Events)
	}
	for i := range want {
		if sc.Events[i] != want[i] {
			t.Errorf("event %d = %+v, want %+v", i, sc.Events[i], want[i])
		}
	}
	if sc, err := ParseScenario(strings.NewReader("")); err != nil || len(sc.Events) != 0 {
		t.Errorf("empty file: %v %v", sc, err)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown top key", "event: []", "field event not found"},
		{"unknown event key", "events:\n  - at: 1s\n    kind: outage\n    duration: 5s", "field duration not found"},
		{"bad kind", "events:\n  - at: 1s\n    kind: meteor", "unknown kind"},
		{"bad duration", "events:\n  - at: soon\n    kind: outage", "soon"},
		{"bandwidth factor", "events:\n  - at: 1s\n    kind: bandwidth\n    factor: 4", "factor must be in (0,1]"},
		{"prefill factor", "events:\n  - at: 1s\n    kind: prefill_slow\n    factor: 0.5", "factor must be >= 1"},
		{"burst streams", "events:\n  - at: 1s\n    kind: burst", "streams must be > 0"},
		{"every without for", "events:\n  - at: 1s\n    kind: outage\n    every: 10s", "every needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario(strings.NewReader(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	_, err := New(Config{Models: []ModelSpec{stepModel("m", time.Millisecond, 1e6)},
		Scenario: Scenario{Events: []Event{{Kind: EventOutage, Model: "ghost"}}}})
	if err == nil || !strings.Contains(err.Error(), `unknown model "ghost"`) {
		t.Errorf("unknown model in scenario: %v", err)
	}
}

func TestParseEvent(t *testing.T) {
	ev, err := ParseEvent("bandwidth@30s,factor=0.25,for=45s,model=Qwen/Qwen2.5-14B-Instruct")
	want := Event{At: 30 * time.Second, Kind: EventBandwidth, Factor: 0.25, For: 45 * time.Second, Model: "Qwen/Qwen2.5-14B-Instruct"}
	if err != nil || ev != want {
		t.Errorf("got %+v %v", ev, err)
	}
	for _, bad := range []string{"outage", "outage@x", "burst@1s", "outage@1s,color=red", "outage@1s,for"} {
		if _, err := ParseEvent(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEffectsTimeline(t *testing.T) {
	sc := Scenario{Events: []Event{
		{At: 30 * time.Second, Kind: EventBandwidth, Model: "a", Factor: 0.25, For: 45 * time.Second},
		{At: 10 * time.Second, Kind: EventBurst, Streams: 5, For: 5 * time.Second, Every: 20 * time.Second},
		{At: 100 * time.Second, Kind: EventPrefillSlow, Factor: 5},
		{At: 50 * time.Second, Kind: EventOutage, Model: "b", For: 10 * time.Second},
		{At: 200 * time.Second, Kind: EventKVPressure, Model: "c", Factor: 0.1, For: 10 * time.Second},
		{At: 200 * time.Second, Kind: EventNetworkDelay, Model: "c", Delay: 300 * time.Millisecond, For: 10 * time.Second},
		{At: 200 * time.Second, Kind: EventPrefixMiss, Model: "c", For: 10 * time.Second},
		{At: 200 * time.Second, Kind: EventSpecAccept, Model: "c", Factor: 0.2, For: 10 * time.Second},
	}}
	fx := func(change func(*effects)) effects {
		e := noEffects()
		change(&e)
		return e
	}
	for _, tc := range []struct {
		model string
		at    time.Duration
		want  effects
	}{
		{"a", 0, noEffects()},
		{"a", 12 * time.Second, fx(func(e *effects) { e.burst = 5 })},
		{"a", 16 * time.Second, noEffects()},
		{"a", 31 * time.Second, fx(func(e *effects) { e.bwFactor, e.burst = 0.25, 5 })},
		{"b", 31 * time.Second, fx(func(e *effects) { e.burst = 5 })},
		{"b", 55 * time.Second, fx(func(e *effects) { e.outage, e.outageLeft = true, 5*time.Second })},
		{"a", 76 * time.Second, noEffects()},
		{"a", 500 * time.Second, fx(func(e *effects) { e.prefillFactor = 5 })},
		{"c", 205 * time.Second, fx(func(e *effects) {
			e.prefillFactor, e.kvFactor, e.netDelay, e.prefixMiss, e.acceptFactor = 5, 0.1, 300*time.Millisecond, true, 0.2
		})},
		{"a", 205 * time.Second, fx(func(e *effects) { e.prefillFactor = 5 })},
		{"c", 216 * time.Second, fx(func(e *effects) { e.prefillFactor = 5 })},
	} {
		if got := sc.effectsAt(tc.model, -1, tc.at); got != tc.want {
			t.Errorf("%s@%v: %+v, want %+v", tc.model, tc.at, got, tc.want)
		}
	}
}

// The diagnosis events parse in the compact form and reject their bad
// factors.
func TestParseDiagnosisEvents(t *testing.T) {
	ev, err := ParseEvent("network_delay@5s,delay=250ms,model=m,for=10s")
	if err != nil || ev != (Event{At: 5 * time.Second, Kind: EventNetworkDelay, Delay: 250 * time.Millisecond, Model: "m", For: 10 * time.Second}) {
		t.Errorf("network_delay: %+v %v", ev, err)
	}
	for _, ok := range []string{"kv_pressure@1s,factor=0.2", "prefix_miss@1s", "spec_accept@1s,factor=0"} {
		if _, err := ParseEvent(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"kv_pressure@1s,factor=1", "kv_pressure@1s", "network_delay@1s", "spec_accept@1s,factor=1.5", "network_delay@1s,delay=-1s"} {
		if _, err := ParseEvent(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Scenario events change the engine's behaviour: bandwidth ÷4 makes steps
// 4× longer (and DRAM-active drops); a prefill slow-down stretches TTFT.
func TestScenarioChangesEngine(t *testing.T) {
	clk := newFakeClock()
	const step = 5 * time.Millisecond
	s, ts := newTestServer(t, Config{Clock: clk.Now, Models: []ModelSpec{stepModel("m", step, 10000)},
		Scenario: Scenario{Events: []Event{
			{At: time.Minute, Kind: EventBandwidth, Factor: 0.25, For: time.Minute},
			{At: 3 * time.Minute, Kind: EventPrefillSlow, Factor: 5, For: time.Minute},
		}}})
	body := `{"model":"m","stream":true,"max_tokens":20,"ignore_eos":true,"prompt":"` + strings.Repeat("abcd", 500) + `"}`
	retry(t, func() error {
		clk.Set(0)
		base := streamRequest(t, context.Background(), ts.URL, "/v1/completions", body)
		clk.Set(time.Minute + time.Second)
		slow := streamRequest(t, context.Background(), ts.URL, "/v1/completions", body)
		if st := s.Stats()[0]; st.BandwidthFactor != 0.25 || !within(st.StepTime, 4*step, step) {
			return fmt.Errorf("degraded stats %+v", st)
		}
		if ratio := float64(slow.tpot()) / float64(base.tpot()); ratio < 3 || ratio > 5 {
			return fmt.Errorf("TPOT %v → %v (×%.2f), want ×4", base.tpot(), slow.tpot(), ratio)
		}
		clk.Set(3*time.Minute + time.Second)
		pf := streamRequest(t, context.Background(), ts.URL, "/v1/completions", body)
		// 500 prompt tokens at 10k tok/s = 50 ms; ×5 = 250 ms.
		if base.ttft > 120*time.Millisecond || pf.ttft < 240*time.Millisecond || pf.ttft > 400*time.Millisecond {
			return fmt.Errorf("TTFT %v → %v under prefill ×5", base.ttft, pf.ttft)
		}
		return nil
	})
}

// Background load runs through the engines without any HTTP client;
// bursts add streams only while active.
func TestLoadAndBurst(t *testing.T) {
	clk := newFakeClock()
	spec := stepModel("m", 2*time.Millisecond, 1e5)
	s, ts := newTestServer(t, Config{Clock: clk.Now, Load: 2, Models: []ModelSpec{spec},
		Scenario: Scenario{Events: []Event{{At: time.Minute, Kind: EventBurst, Streams: 10, For: time.Minute}}}})
	eventually(t, 3*time.Second, "load requests running", func() bool { return s.Stats()[0].Running >= 1 })
	if n := s.load.running[0].Load(); n != 2 {
		t.Errorf("%d load workers, want 2", n)
	}
	clk.Set(time.Minute)
	eventually(t, 3*time.Second, "burst workers", func() bool { return s.load.running[0].Load() == 12 })
	eventually(t, 3*time.Second, "burst requests", func() bool { return s.Stats()[0].Running >= 6 })
	clk.Set(3 * time.Minute)
	eventually(t, 10*time.Second, "burst to end", func() bool { return s.load.running[0].Load() <= 2 })
	fams := scrape(t, ts.URL)
	if got := metricValue(t, fams, "vllm:generation_tokens_total", map[string]string{"model_name": "m"}).GetCounter().GetValue(); got == 0 {
		t.Error("load produced no tokens")
	}
}

// The diagnosis events act on the engine: prefix_miss stops the prefix
// cache's hits (queries still count), kv_pressure holds its share of the
// KV pool (usage reads at least that), spec_accept at 0 accepts no draft.
func TestDiagnosisEventsActOnEngine(t *testing.T) {
	spec := stepModel("spec", 2*time.Millisecond, 20000)
	spec.SpecTokens, spec.SpecAcceptRate = 3, 0.9
	s, ts := newTestServer(t, Config{PrefixCaching: true,
		Models: []ModelSpec{stepModel("miss", 2*time.Millisecond, 20000), stepModel("kv", 2*time.Millisecond, 20000), spec},
		Scenario: Scenario{Events: []Event{{Kind: EventPrefixMiss, Model: "miss"},
			{Kind: EventKVPressure, Model: "kv", Factor: 0.1}, {Kind: EventSpecAccept, Model: "spec", Factor: 0}}}})
	const prompt = 1000
	for _, m := range []string{"miss", "kv", "spec"} {
		for range 2 {
			generateAll(t, s, Request{Model: m, PromptTokens: prompt, MaxTokens: 16, IgnoreEOS: true, PrefixKey: 7, PrefixTokens: prompt})
		}
	}
	fams := scrape(t, ts.URL)
	lbl := func(m string) map[string]string { return map[string]string{"model_name": m} }
	value := func(name, m string) float64 {
		mv := metricValue(t, fams, name, lbl(m))
		if c := mv.GetCounter(); c != nil {
			return c.GetValue()
		}
		return mv.GetGauge().GetValue()
	}
	if q, h := value("vllm:prefix_cache_queries_total", "miss"), value("vllm:prefix_cache_hits_total", "miss"); q != 2*prompt || h != 0 {
		t.Errorf("prefix_miss: %v hits of %v queries, want 0 of %v", h, q, 2*prompt)
	}
	if h := value("vllm:prefix_cache_hits_total", "kv"); h == 0 {
		t.Error("the untouched model's repeated prompt did not hit: the check above proves nothing")
	}
	if u := value("vllm:kv_cache_usage_perc", "kv"); u < 0.9 {
		t.Errorf("kv_pressure 0.1: KV usage %v, want at least the 0.9 held", u)
	}
	if u := value("vllm:kv_cache_usage_perc", "miss"); u >= 0.9 {
		t.Errorf("untouched model's KV usage %v", u)
	}
	if a, d := value("vllm:spec_decode_num_accepted_tokens_total", "spec"), value("vllm:spec_decode_num_drafts_total", "spec"); a != 0 || d == 0 {
		t.Errorf("spec_accept 0: %v accepted over %v drafts, want 0 over some", a, d)
	}
}
