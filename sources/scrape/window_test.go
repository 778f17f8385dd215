package scrape

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// hist writes a histogram family: one series per labels entry.
func hist(name string, bounds []string, series map[string][]float64, sums map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP %s h\n# TYPE %s histogram\n", name, name)
	for labels, counts := range series {
		for i, le := range bounds {
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"%s\"} %g\n", name, labels, le, counts[i])
		}
		fmt.Fprintf(&b, "%s_count{%s} %g\n%s_sum{%s} %g\n", name, labels, counts[len(counts)-1], name, labels, sums[labels])
	}
	return b.String()
}

func gaugeText(name, typ string, series map[string]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s %s\n", name, typ)
	for labels, v := range series {
		fmt.Fprintf(&b, "%s{%s} %g\n", name, labels, v)
	}
	return b.String()
}

func ttftBounds() []string { return []string{"0.1", "0.5", "1.0", "+Inf"} }

const (
	e0 = `engine="0",model_name="m"`
	e1 = `engine="1",model_name="m"`
)

// Two data-parallel engines, two scrapes: the window histogram is the
// per-le sum of both engines' increments, and its quantiles are the
// hand-computed Prometheus values.
func TestWindowQuantileFromBucketDeltas(t *testing.T) {
	page1 := hist("vllm:time_to_first_token_seconds", ttftBounds(),
		map[string][]float64{e0: {1, 3, 4, 4}, e1: {0, 0, 1, 1}}, map[string]float64{e0: 2.0, e1: 0.9})
	page2 := hist("vllm:time_to_first_token_seconds", ttftBounds(),
		map[string][]float64{e0: {3, 8, 10, 11}, e1: {1, 2, 4, 5}}, map[string]float64{e0: 9.0, e1: 6.9})
	tg := newTarget(t, page1)
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	ctx := context.Background()
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatal(err)
	}
	c.Take()
	tg.set(page2)
	clk.Advance(time.Second)
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatal(err)
	}
	o := one(t, c.Take(), telemetry.KindHistogram, tg.host()+"/m", telemetry.TTFT)
	// Increments: engine 0 {2,5,6,7} + engine 1 {1,2,3,4} = {3,7,9,11}; sum 7+6.
	want := []telemetry.Bucket{{UpperBound: 0.1, Count: 3}, {UpperBound: 0.5, Count: 7}, {UpperBound: 1, Count: 9}, {UpperBound: math.Inf(1), Count: 11}}
	if fmt.Sprint(o.Buckets) != fmt.Sprint(want) || math.Abs(o.Value-13) > 1e-9 {
		t.Fatalf("buckets %v sum %v", o.Buckets, o.Value)
	}
	for _, tc := range []struct{ q, want float64 }{
		{0.1, 0.1 * 1.1 / 3},       // rank 1.1 in (0, 0.1], 3 there
		{0.5, 0.1 + 0.4*(2.5/4)},   // rank 5.5: 2.5 of 4 into (0.1, 0.5] = 0.35
		{0.75, 0.5 + 0.5*(1.25/2)}, // rank 8.25: 1.25 of 2 into (0.5, 1] = 0.8125
		{0.9, 1.0},                 // rank 9.9 in +Inf: highest finite bound
	} {
		if got := telemetry.HistogramQuantile(tc.q, o.Buckets); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("p%v = %v, want %v", tc.q*100, got, tc.want)
		}
	}
}

// A restart skips the histogram's interval (bucket increments would go
// negative); the counter's rate window starts afresh
// (TestCounterRateOverWindow) and the endpoint is labelled restarted.
func TestRestartSkipsHistogramInterval(t *testing.T) {
	page := func(tokens float64, created float64, counts []float64) string {
		return fmt.Sprintf("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %g\n"+
			"# TYPE vllm:generation_tokens_created gauge\nvllm:generation_tokens_created{model_name=\"m\"} %g\n", tokens, created) +
			hist("vllm:e2e_request_latency_seconds", ttftBounds(), map[string][]float64{`model_name="m"`: counts}, map[string]float64{`model_name="m"`: counts[3]}) +
			fmt.Sprintf("# TYPE vllm:e2e_request_latency_seconds_created gauge\nvllm:e2e_request_latency_seconds_created{model_name=\"m\"} %g\n", created)
	}
	tg := newTarget(t, page(1000, 100, []float64{1, 2, 3, 4}))
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	ep := tg.host() + "/m"
	step := stepper(t, tg, s, clk, c)
	step(page(1000, 100, []float64{1, 2, 3, 4}))
	obs := step(page(1100, 100, []float64{2, 4, 6, 8}))
	checkGauge(t, obs, ep, telemetry.OutputTPS, 50) // 100 tokens / 2 s
	one(t, obs, telemetry.KindHistogram, ep, telemetry.E2E)

	// Restart: counts down → the histogram's interval is skipped.
	obs = step(page(10, 200, []float64{0, 1, 1, 1}))
	if n := len(find(obs, telemetry.KindHistogram, ep, telemetry.E2E)); n != 0 {
		t.Fatalf("restart interval emitted:\n%s", dump(obs))
	}
	// The rate window starts afresh: no rate across the restart, and
	// the endpoint is labelled restarted.
	if got := find(obs, telemetry.KindSample, ep, telemetry.OutputTPS); len(got) != 0 {
		t.Fatalf("a rate across the restart: %+v", got)
	}
	var label string
	for _, o := range find(obs, telemetry.KindEndpoint, ep, "") {
		label = o.Info.Labels[telemetry.LabelRestarted]
	}
	if at, how, ok := (telemetry.Endpoint{Labels: map[string]string{telemetry.LabelRestarted: label}}).Restarted(); !ok || !at.Equal(clk.Now()) || how != "counter reset" {
		t.Errorf("restarted label %q, want the restart at %s by counter reset", label, clk.Now())
	}
	// Next interval counts from the new baseline.
	obs = step(page(50, 200, []float64{1, 2, 3, 3}))
	if o := one(t, obs, telemetry.KindHistogram, ep, telemetry.E2E); o.Buckets[3].Count != 2 {
		t.Fatalf("after restart %+v", o.Buckets)
	}
	checkGauge(t, obs, ep, telemetry.OutputTPS, 20) // the new life's 40 tokens / 2 s
	// Restart that already served more than before: only _created tells.
	obs = step(page(5000, 300, []float64{5, 6, 7, 8}))
	if n := len(find(obs, telemetry.KindHistogram, ep, telemetry.E2E)); n != 0 {
		t.Fatalf("_created change not treated as restart:\n%s", dump(obs))
	}
}

func TestMultiModelTarget(t *testing.T) {
	body := gaugeText("vllm:num_requests_running", "gauge", map[string]float64{
		`engine="0",model_name="a"`: 2, `engine="1",model_name="a"`: 3, `engine="0",model_name="b"`: 7}) +
		gaugeText("vllm:kv_cache_usage_perc", "gauge", map[string]float64{
			`engine="0",model_name="a"`: 0.2, `engine="1",model_name="a"`: 0.6, `engine="0",model_name="b"`: 0.1})
	tg := newTarget(t, body)
	first, _ := scrapeTwice(t, tg, Config{})
	a, b := tg.host()+"/a", tg.host()+"/b"
	a0, a1 := a+" [dp 0]", a+" [dp 1]" // a's two engines are its ranks
	if got := strings.Join(endpoints(first), " | "); got != strings.Join([]string{a, a0, a1, b}, " | ") {
		t.Fatalf("endpoints %v", got)
	}
	checkGauge(t, first, a, telemetry.Running, 5) // summed over engines
	checkGauge(t, first, a0, telemetry.Running, 2)
	checkGauge(t, first, a1, telemetry.Running, 3)
	checkGauge(t, first, b, telemetry.Running, 7)
	checkGauge(t, first, a, telemetry.KVCache, 0.6) // fullest engine
	checkGauge(t, first, a0, telemetry.KVCache, 0.2)
	if info := one(t, first, telemetry.KindEndpoint, a, "").Info; info.Model != "a" || info.Engine != telemetry.EngineVLLM {
		t.Fatalf("info %+v", info)
	}
}

func TestNaNIsNoData(t *testing.T) {
	body := gaugeText("vllm:num_requests_running", "gauge", map[string]float64{`model_name="m"`: math.NaN()}) +
		hist("vllm:time_to_first_token_seconds", ttftBounds(), map[string][]float64{`model_name="m"`: {1, 2, 3, 4}}, map[string]float64{`model_name="m"`: 1})
	tg := newTarget(t, body)
	first, _ := scrapeTwice(t, tg, Config{})
	one(t, first, telemetry.KindNoData, tg.host()+"/m", telemetry.Running)
	tg.set(strings.Replace(body, "_sum{model_name=\"m\"} 1", "_sum{model_name=\"m\"} NaN", 1))
	_, second := scrapeTwice(t, tg, Config{})
	one(t, second, telemetry.KindNoData, tg.host()+"/m", telemetry.TTFT)
	for _, o := range second {
		if o.Kind == telemetry.KindSample && math.IsNaN(o.Value) {
			t.Fatal("NaN sample emitted")
		}
	}
}

func TestErrorRates(t *testing.T) {
	vllm := func(stop, length, abort float64) string {
		return gaugeText("vllm:request_success_total", "counter", map[string]float64{
			`finished_reason="stop",model_name="m"`: stop, `finished_reason="length",model_name="m"`: length,
			`finished_reason="abort",model_name="m"`: abort})
	}
	sglang := func(aborted, total float64) string {
		return gaugeText("sglang:num_aborted_requests_total", "counter", map[string]float64{`model_name="m"`: aborted}) +
			gaugeText("sglang:num_requests_total", "counter", map[string]float64{`model_name="m"`: total})
	}
	triton := func(fail, ok float64) string {
		return gaugeText("nv_inference_request_failure", "counter", map[string]float64{`model="m",version="1"`: fail}) +
			gaugeText("nv_inference_request_success", "counter", map[string]float64{`model="m",version="1"`: ok}) +
			gaugeText("nv_inference_request_duration_us", "counter", map[string]float64{`model="m",version="1"`: ok * 2e5}) +
			gaugeText("nv_inference_queue_duration_us", "counter", map[string]float64{`model="m",version="1"`: ok * 100})
	}
	for name, tc := range map[string]struct {
		before, after string
		failed, total float64
	}{
		"vllm":   {vllm(10, 5, 0), vllm(18, 6, 1), 1, 10}, // 1 abort of 10
		"sglang": {sglang(1, 10), sglang(3, 30), 2, 20},
		"triton": {triton(0, 3), triton(1, 6), 1, 4},
	} {
		t.Run(name, func(t *testing.T) {
			tg := newTarget(t, tc.before)
			c := &collector{}
			clk := newClock()
			s := New(Config{URL: tg.URL, Now: clk.Now}, c)
			_ = s.ScrapeOnce(context.Background())
			c.Take()
			tg.set(tc.after)
			clk.Advance(time.Second)
			if err := s.ScrapeOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			obs := c.Take()
			checkErrorCounts(t, obs, tg.host()+"/m", tc.failed, tc.total)
			if name == "triton" {
				// Mean request time: Δ600000 µs / Δ3 requests = 0.2 s, marked approximate.
				o := one(t, obs, telemetry.KindSample, tg.host()+"/m", telemetry.E2E)
				if math.Abs(o.Value-0.2) > 1e-12 || !o.Approx {
					t.Fatalf("triton mean e2e %+v", o)
				}
			}
		})
	}
}

func TestLlamaCppCountersOnly(t *testing.T) {
	page := func(tokens, secs float64) string {
		return gaugeText("llamacpp:tokens_predicted_total", "counter", map[string]float64{"": tokens}) +
			gaugeText("llamacpp:tokens_predicted_seconds_total", "counter", map[string]float64{"": secs}) +
			gaugeText("llamacpp:requests_processing", "gauge", map[string]float64{"": 2})
	}
	tg := newTarget(t, strings.ReplaceAll(page(100, 2), "{}", ""))
	tg.extra["/v1/models"] = `{"object":"list","data":[{"id":"qwen2.5-7b-instruct-q4_k_m.gguf"}]}`
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	_ = s.ScrapeOnce(context.Background())
	c.Take()
	tg.set(strings.ReplaceAll(page(400, 5), "{}", ""))
	clk.Advance(2 * time.Second)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	ep := tg.host() + "/qwen2.5-7b-instruct-q4_k_m.gguf"
	checkGauge(t, obs, ep, telemetry.OutputTPS, 150)                                             // 300 tokens / 2 s
	if o := one(t, obs, telemetry.KindSample, ep, telemetry.ITL); o.Value != 0.01 || !o.Approx { // 3 s / 300 tokens
		t.Fatalf("itl %+v", o)
	}
	checkGauge(t, obs, ep, telemetry.Running, 2)
}

// The cached detection follows a target that changes engine.
func TestEngineChangeIsDetected(t *testing.T) {
	vllm := gaugeText("vllm:num_requests_running", "gauge", map[string]float64{`model_name="m"`: 1})
	sgl := gaugeText("sglang:num_running_reqs", "gauge", map[string]float64{`model_name="m"`: 2})
	tg := newTarget(t, vllm)
	c := &collector{}
	s := New(Config{URL: tg.URL}, c)
	for _, tc := range []struct {
		body string
		want telemetry.Engine
	}{{vllm, telemetry.EngineVLLM}, {vllm, telemetry.EngineVLLM}, {sgl, telemetry.EngineSGLang}, {vllm, telemetry.EngineVLLM}} {
		tg.set(tc.body)
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if info := one(t, c.Take(), telemetry.KindEndpoint, tg.host()+"/m", "").Info; info.Engine != tc.want {
			t.Fatalf("engine %q, want %q", info.Engine, tc.want)
		}
	}
}
