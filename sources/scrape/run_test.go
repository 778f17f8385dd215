package scrape

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

func TestMBUEstimate(t *testing.T) {
	itlBounds := []string{"0.005", "0.01", "0.025", "+Inf"}
	const lbl = `engine="0",model_name="m"`
	page := func(count, sum float64) string {
		return `# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="850"} 1.0
` + gaugeText("vllm:kv_cache_usage_perc", "gauge", map[string]float64{lbl: 0.5}) +
			hist("vllm:inter_token_latency_seconds", itlBounds, map[string][]float64{lbl: {0, count / 2, count, count}}, map[string]float64{lbl: sum})
	}
	tg := newTarget(t, page(100, 1))
	c := &collector{}
	clk := newClock()
	cfg := Config{URL: tg.URL, Now: clk.Now, MBU: map[string]bandwidth.Model{
		"m": {Parameters: 4e9, BytesPerParameter: 1, KVBytesPerToken: 1000, PeakBandwidth: 1e12}}}
	s := New(cfg, c)
	_ = s.ScrapeOnce(context.Background())
	if len(find(c.Take(), telemetry.KindSample, "*", telemetry.MBU)) != 0 {
		t.Fatal("MBU without a step time")
	}
	tg.set(page(200, 2)) // 100 steps, 1 s → 10 ms per step
	clk.Advance(time.Second)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := one(t, c.Take(), telemetry.KindSample, tg.host()+"/m", telemetry.MBU)
	// (4e9 B weights + 0.5 × 850 × 16 tokens × 1000 B) / 0.01 s / 1e12 B/s
	want := (4e9 + 0.5*850*16*1000) / 0.01 / 1e12
	if math.Abs(o.Value-want) > 1e-12 || !o.Approx {
		t.Fatalf("MBU %+v, want %v", o, want)
	}
	// Unknown GPU: no estimate, a warning.
	cfg.MBU = map[string]bandwidth.Model{"*": {Parameters: 4e9, BytesPerParameter: 1, GPU: "Tesla T4"}}
	_, second := scrapeTwice(t, tg, cfg)
	if len(find(second, telemetry.KindSample, "*", telemetry.MBU)) != 0 {
		t.Fatal("MBU with unknown peak")
	}
}

// waitUntil polls cond until it holds, failing the test after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestRunLoopKeepsGoingAndStops(t *testing.T) {
	tg := newTarget(t, goodPage)
	c := &collector{}
	s := New(Config{URL: tg.URL, Interval: 20 * time.Millisecond}, c)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	// states lists the scrapes' outcomes so far, in order.
	states := func() (out []telemetry.State) {
		for _, o := range c.All() {
			if o.Kind == telemetry.KindSource {
				out = append(out, o.Status.State)
			}
		}
		return out
	}
	waitUntil(t, "two good scrapes", func() bool { return len(states()) >= 2 })
	tg.set("garbage{\n") // failures must not stop the loop
	waitUntil(t, "a failed scrape", func() bool {
		return slices.ContainsFunc(states(), func(s telemetry.State) bool { return s != telemetry.Live })
	})
	tg.set(goodPage)
	waitUntil(t, "a good scrape after the failure", func() bool {
		st := states()
		return len(st) > 0 && st[len(st)-1] == telemetry.Live && slices.ContainsFunc(st, func(s telemetry.State) bool { return s != telemetry.Live })
	})
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	var ok, failed int
	for _, o := range c.Take() {
		if o.Kind == telemetry.KindSource {
			if o.Status.State == telemetry.Live {
				ok++
			} else {
				failed++
			}
		}
	}
	if ok < 3 || failed < 1 {
		t.Fatalf("scrapes ok=%d failed=%d", ok, failed)
	}
	tg.Close()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines %d > %d:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// A scrape in flight when the source shuts down is cut short, not failed:
// no failure or error status reaches the sink (a recording would end with
// a false outage), while a target that does not answer in time still
// fails.
func TestScrapeCutByShutdownIsNoFailure(t *testing.T) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	failures := func(obs []telemetry.Observation) (n int) {
		for _, o := range obs {
			if o.Kind == telemetry.KindFailure || o.Kind == telemetry.KindSource && o.Status != nil && o.Status.State == telemetry.Error {
				n++
			}
		}
		return n
	}
	c := &collector{}
	s := New(Config{URL: srv.URL}, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ScrapeOnce(ctx) }()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ScrapeOnce after cancel: %v, want context.Canceled", err)
	}
	if n := failures(c.Take()); n != 0 {
		t.Fatalf("%d failure observations from a scrape cut by shutdown", n)
	}
	// The same target timing out is a failure.
	s = New(Config{URL: srv.URL, HTTP: httpclient.Config{Timeout: 50 * time.Millisecond}}, c)
	if err := s.ScrapeOnce(context.Background()); err == nil {
		t.Fatal("a target that never answers: no error")
	}
	<-arrived
	if n := failures(c.Take()); n == 0 {
		t.Fatal("a target that never answers: no failure observed")
	}
}
