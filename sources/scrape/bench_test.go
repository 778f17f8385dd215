package scrape

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// genPage writes a vLLM V1 page with models × engines series of every
// family a real server exposes (wanted or not), counters scaled by k.
// It returns the page and its number of sample lines.
func genPage(models, engines, k int) (string, int) {
	benchTTFT := []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "160.0", "640.0", "2560.0", "+Inf"}
	benchITL := []string{"0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "+Inf"}
	benchE2E := []string{"0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0", "40.0", "50.0", "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0", "7680.0", "+Inf"}
	benchTok := []string{"1.0", "2.0", "5.0", "10.0", "20.0", "50.0", "100.0", "200.0", "500.0", "1000.0", "2000.0", "+Inf"}
	var b strings.Builder
	lines := 0
	each := func(f func(lbl string, m, e int)) {
		for m := range models {
			for e := range engines {
				f(fmt.Sprintf(`engine="%d",model_name="org/model-%03d"`, e, m), m, e)
			}
		}
	}
	histo := func(name string, bounds []string) {
		fmt.Fprintf(&b, "# HELP %s h\n# TYPE %s histogram\n", name, name)
		each(func(lbl string, m, e int) {
			for i, le := range bounds {
				fmt.Fprintf(&b, "%s_bucket{%s,le=\"%s\"} %d.0\n", name, lbl, le, k*(i+1)*(m+e+1))
			}
			fmt.Fprintf(&b, "%s_count{%s} %d.0\n%s_sum{%s} %g\n", name, lbl, k*len(bounds)*(m+e+1), name, lbl, float64(k*(m+1))*1.25)
			lines += len(bounds) + 2
		})
		fmt.Fprintf(&b, "# HELP %s_created h\n# TYPE %s_created gauge\n", name, name)
		each(func(lbl string, _, _ int) {
			fmt.Fprintf(&b, "%s_created{%s} 1.7710424574207425e+09\n", name, lbl)
			lines++
		})
	}
	gauge := func(name string) {
		fmt.Fprintf(&b, "# HELP %s g\n# TYPE %s gauge\n", name, name)
		each(func(lbl string, m, e int) {
			fmt.Fprintf(&b, "%s{%s} %g\n", name, lbl, float64((m+e)%10)/10)
			lines++
		})
	}
	counter := func(name string, extra ...string) {
		if len(extra) == 0 {
			extra = []string{""}
		}
		fmt.Fprintf(&b, "# HELP %s c\n# TYPE %s counter\n", name, name)
		each(func(lbl string, m, e int) {
			for _, x := range extra {
				fmt.Fprintf(&b, "%s{%s%s} %d.0\n", name, x, lbl, k*100*(m+e+1))
				lines++
			}
		})
	}
	for i := range 40 { // process/python noise
		fmt.Fprintf(&b, "# TYPE python_gc_objects_collected_total counter\npython_gc_objects_collected_total{generation=\"%d\"} 1.0\n", i)
		lines++
	}
	gauge("vllm:num_requests_running")
	gauge("vllm:num_requests_waiting")
	gauge("vllm:kv_cache_usage_perc")
	gauge("vllm:gpu_cache_usage_perc")
	counter("vllm:prompt_tokens_total")
	counter("vllm:generation_tokens_total")
	counter("vllm:num_preemptions_total")
	counter("vllm:request_success_total", `finished_reason="stop",`, `finished_reason="length",`, `finished_reason="abort",`)
	histo("vllm:time_to_first_token_seconds", benchTTFT)
	histo("vllm:inter_token_latency_seconds", benchITL)
	histo("vllm:time_per_output_token_seconds", benchITL)
	histo("vllm:request_time_per_output_token_seconds", benchITL)
	histo("vllm:e2e_request_latency_seconds", benchE2E)
	histo("vllm:request_queue_time_seconds", benchE2E)
	histo("vllm:request_prefill_time_seconds", benchE2E)
	histo("vllm:request_decode_time_seconds", benchE2E)
	histo("vllm:request_prompt_tokens", benchTok)
	histo("vllm:request_generation_tokens", benchTok)
	return b.String(), lines
}

type discard struct{ n int }

func (d *discard) Observe(telemetry.Observation) { d.n++ }

// BenchmarkParseIngest50k parses and ingests a 50,000-series page (43
// models × 5 data-parallel engines of a vLLM V1 target) per op, against
// the previous page, as a scrape does after its fetch.
func BenchmarkParseIngest50k(b *testing.B) {
	const pages = 8
	bodies := make([]string, pages)
	var lines int
	for k := range pages {
		bodies[k], lines = genPage(43, 5, k+1)
	}
	if lines < 50000 {
		b.Fatalf("only %d series", lines)
	}
	sink := &discard{}
	clk := newClock()
	s := New(Config{URL: "http://bench:8000", Now: clk.Now}, sink)
	h := http.Header{"Content-Type": {"text/plain; version=0.0.4; charset=utf-8"}}
	ctx := context.Background()
	if err := s.process(ctx, bodies[0], h, clk.Now(), time.Now()); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(bodies[0])))
	b.ResetTimer()
	i := 1
	cpu0 := cpuTime()
	for b.Loop() {
		clk.Advance(time.Second)
		if err := s.process(ctx, bodies[i%pages], h, clk.Now(), time.Now()); err != nil {
			b.Fatal(err)
		}
		i++
	}
	// Process CPU per op: the figure that matters on a shared machine,
	// where wall-clock ns/op includes time waiting for a core.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(i-1), "cpu-ms/op")
	b.ReportMetric(float64(lines), "series")
	b.ReportMetric(float64(sink.n)/float64(i), "obs/op")
}

// The generated page is a valid exposition and yields every signal.
func TestGeneratedPage(t *testing.T) {
	p1, lines := genPage(2, 2, 1)
	p2, _ := genPage(2, 2, 2)
	if lines < 100 {
		t.Fatal(lines)
	}
	tg := newTarget(t, p1)
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	_ = s.ScrapeOnce(context.Background())
	c.Take()
	tg.set(p2)
	clk.Advance(time.Second)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	ep := tg.host() + "/org/model-001"
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.ITL, telemetry.TPOT, telemetry.E2E, telemetry.QueueTime, telemetry.ErrorRate} {
		one(t, obs, telemetry.KindHistogram, ep, sig)
	}
	for _, sig := range []telemetry.Signal{telemetry.Running, telemetry.Waiting, telemetry.KVCache, telemetry.OutputTPS} {
		one(t, obs, telemetry.KindSample, ep, sig)
	}
}

// BenchmarkScrapeOnceFixture is one full scrape (HTTP on loopback, parse,
// ingest) of the vLLM v0.10 fixture page (~500 lines).
func BenchmarkScrapeOnceFixture(b *testing.B) {
	tg := newTarget(&testing.T{}, readFixture(b, "vllm-v0.10-metrics.txt")+"\n")
	defer tg.Close()
	s := New(Config{URL: tg.URL}, &discard{})
	ctx := context.Background()
	b.ReportAllocs()
	cpu0, n := cpuTime(), 0
	for b.Loop() {
		if err := s.ScrapeOnce(ctx); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(n), "cpu-µs/op")
}

// BenchmarkProcessFixture is parse + ingest of the vLLM v0.10 fixture
// page, without HTTP.
func BenchmarkProcessFixture(b *testing.B) {
	body := readFixture(b, "vllm-v0.10-metrics.txt") + "\n"
	clk := newClock()
	s := New(Config{URL: "http://bench:8000", Now: clk.Now}, &discard{})
	h := http.Header{"Content-Type": {"text/plain; version=0.0.4; charset=utf-8"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		clk.Advance(time.Second)
		if err := s.process(ctx, body, h, clk.Now(), time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
