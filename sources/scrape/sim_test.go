package scrape

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// simModels are two small models so the test machine keeps up.
func simModels() []sim.ModelSpec {
	return []sim.ModelSpec{
		{Name: "org/small-a", Params: 1.24e9, DtypeBytes: 2, KVBytesPerToken: 32768, GPU: "L4", MaxBatch: 8, MeanOutputTokens: 16},
		{Name: "org/small-b", Params: 3.21e9, DtypeBytes: 2, KVBytesPerToken: 114688, GPU: "H100 SXM", MaxBatch: 8, MeanOutputTokens: 16},
	}
}

func startSim(t *testing.T, format string) *sim.Server {
	t.Helper()
	s, err := sim.New(sim.Config{Listen: "127.0.0.1:0", DCGMListen: "127.0.0.1:0", Seed: 1, Load: 2,
		Models: simModels(), MetricsFormat: format})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// scrapeSim scrapes a running simulator twice, 800 ms apart.
func scrapeSim(t *testing.T, cfg Config) []telemetry.Observation {
	t.Helper()
	c := &collector{}
	s := New(cfg, c)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Take()
	time.Sleep(800 * time.Millisecond)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c.Take()
}

func TestScrapeSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulator for a second")
	}
	for _, format := range []string{sim.FormatVLLM, sim.FormatSGLang} {
		t.Run(format, func(t *testing.T) {
			srv := startSim(t, format)
			mbu := map[string]bandwidth.Model{}
			for _, m := range simModels() {
				g, err := sim.LookupGPU(m.GPU)
				if err != nil {
					t.Fatal(err)
				}
				mbu[m.Name] = bandwidth.Model{Parameters: m.Params, BytesPerParameter: m.DtypeBytes,
					KVBytesPerToken: m.KVBytesPerToken, GPU: g.DCGMName}
				if b, ok := bandwidth.Lookup(g.DCGMName); !ok || b.Peak != g.PeakBW {
					t.Errorf("peak of %q: %+v, simulator %v", g.DCGMName, b, g.PeakBW)
				}
			}
			obs := scrapeSim(t, Config{URL: srv.URL(), MBU: mbu})
			host := srv.URL()[len("http://"):]
			want := map[string]telemetry.Engine{sim.FormatVLLM: telemetry.EngineVLLM, sim.FormatSGLang: telemetry.EngineSGLang}[format]
			for _, m := range simModels() {
				ep := host + "/" + m.Name
				if info := one(t, obs, telemetry.KindEndpoint, ep, "").Info; info.Engine != want {
					t.Fatalf("engine %q", info.Engine)
				}
				one(t, obs, telemetry.KindHistogram, ep, telemetry.E2E) // requests may not finish within the interval
				for _, sig := range []telemetry.Signal{telemetry.ITL, telemetry.TTFT} {
					h := one(t, obs, telemetry.KindHistogram, ep, sig)
					if n := h.Buckets[len(h.Buckets)-1].Count; n <= 0 || h.Value <= 0 {
						t.Errorf("%s %s: no traffic in the interval (%v, %v)", ep, sig, n, h.Value)
					}
				}
				if o := one(t, obs, telemetry.KindSample, ep, telemetry.OutputTPS); o.Value <= 0 {
					t.Errorf("%s tok/s %v", ep, o.Value)
				}
				if o := one(t, obs, telemetry.KindSample, ep, telemetry.KVCache); o.Value < 0 || o.Value > 1 {
					t.Errorf("%s KV %v", ep, o.Value)
				}
				one(t, obs, telemetry.KindSample, ep, telemetry.Running)
				if mb := find(obs, telemetry.KindSample, ep, telemetry.MBU); len(mb) == 1 {
					if v := mb[0].Value; v <= 0 || v > 1.2 || math.IsNaN(v) || !mb[0].Approx {
						t.Errorf("%s MBU %v", ep, v)
					}
					t.Logf("%s %s MBU estimate %.3f", format, ep, mb[0].Value)
				} else if format == sim.FormatVLLM {
					t.Errorf("%s: no MBU estimate", ep)
				}
			}
			if st := status(t, obs); st.State != telemetry.Live || len(st.Warnings) != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// pageSumOf is pageSum restricted to one model's series.
func pageSumOf(t *testing.T, raw, name, model string) float64 {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(raw, "\n") {
		if strings.Contains(l, `model_name="`+model+`"`) {
			lines = append(lines, l)
		}
	}
	return pageSum(t, strings.Join(lines, "\n"), name)
}

// recordingProxy serves a simulator's /metrics and keeps every body it
// served, so a test computes the expected figures from the very pages the
// scraper read.
type recordingProxy struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newRecordingProxy(t *testing.T, upstream string) *recordingProxy {
	p := &recordingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(upstream + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		p.mu.Lock()
		p.bodies = append(p.bodies, string(b))
		p.mu.Unlock()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		_, _ = w.Write(b)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *recordingProxy) last(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bodies[len(p.bodies)-n:]...)
}

// The simulator serves every diagnosis signal in vLLM's names and the
// scraper reads each one with the value the two pages imply: a spec-decode
// model with MFU counters (measured MBU) and a small-KV model that
// preempts (estimated MBU), both with shared system prompts.
func TestScrapeSimulatorDiagnosis(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulator for a few seconds")
	}
	models := simModels()
	models[0].SpecTokens, models[0].MFUMetrics = 2, true
	// A KV pool of ~150 blocks (2,400 tokens) for 8 sequences of up to 1,024.
	models[1].GPU, models[1].Params, models[1].KVBytesPerToken = "L4", 1.24e9, 32768
	models[1].MaxModelLen, models[1].GPUMemUtilization, models[1].MeanOutputTokens = 1024, 0.106, 200
	srv, err := sim.New(sim.Config{Listen: "127.0.0.1:0", Seed: 1, Load: 8, Models: models,
		PrefixCaching: true, SharedPrefixShare: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	proxy := newRecordingProxy(t, srv.URL())
	mbu := map[string]bandwidth.Model{}
	for _, m := range models {
		g, err := sim.LookupGPU(m.GPU)
		if err != nil {
			t.Fatal(err)
		}
		mbu[m.Name] = bandwidth.Model{Parameters: m.Params, BytesPerParameter: m.DtypeBytes, GPU: g.DCGMName}
	}
	c := &collector{}
	clk := newClock()
	s := New(Config{URL: proxy.URL, Now: clk.Now, MBU: mbu}, c)
	ctx := context.Background()
	// Wait for the small pool to have preempted, then scrape twice.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := s.ScrapeOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if pageSumOf(t, proxy.last(1)[0], "vllm:num_preemptions_total", models[1].Name) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no preemption in 10 s")
		}
		clk.Advance(time.Second)
		time.Sleep(200 * time.Millisecond)
	}
	// A fresh scraper scrapes twice: its rates are over that one span,
	// Δcount / 1 s, which the recorded pages tell.
	c.Take()
	s = New(Config{URL: proxy.URL, Now: clk.Now, MBU: mbu}, c)
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// The second scrape once every model has finished and admitted a
	// request since the first (a fixed second was too short for the
	// small-KV model on a loaded machine); the span the rates use is the
	// scraper's clock, one second.
	waitProgress(t, srv.URL()+"/metrics", proxy.last(1)[0], models)
	clk.Advance(time.Second)
	if err := s.ScrapeOnce(ctx); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	pages := proxy.last(2)
	host := strings.TrimPrefix(proxy.URL, "http://")
	for i, m := range models {
		ep := host + "/" + m.Name
		delta := func(name string) float64 {
			return pageSumOf(t, pages[1], name, m.Name) - pageSumOf(t, pages[0], name, m.Name)
		}
		for _, c := range []struct {
			sig    telemetry.Signal
			family string
		}{{telemetry.QueueTime, "vllm:request_queue_time_seconds"}, {telemetry.PrefillTime, "vllm:request_prefill_time_seconds"},
			{telemetry.DecodeTime, "vllm:request_decode_time_seconds"}} {
			h := one(t, obs, telemetry.KindHistogram, ep, c.sig)
			if n, want := h.Buckets[len(h.Buckets)-1].Count, delta(c.family+"_count"); n != want || n == 0 {
				t.Errorf("%s %s: %v requests, want %v (> 0)", m.Name, c.sig, n, want)
			}
		}
		checkSample(t, obs, ep, telemetry.RequestRate, delta("vllm:request_success_total"))
		checkSample(t, obs, ep, telemetry.PromptTPS, delta("vllm:prompt_tokens_total"))
		checkSample(t, obs, ep, telemetry.Preemptions, delta("vllm:num_preemptions_total"))
		hits, queries := delta("vllm:prefix_cache_hits_total"), delta("vllm:prefix_cache_queries_total")
		checkSample(t, obs, ep, telemetry.PrefixCacheHit, hits/queries)
		if total := pageSumOf(t, pages[1], "vllm:prefix_cache_hits_total", m.Name); total <= 0 {
			t.Errorf("%s: no prefix-cache hits with shared system prompts", m.Name)
		}
		mb := one(t, obs, telemetry.KindSample, ep, telemetry.MBU)
		if i == 0 {
			accepted := delta("vllm:spec_decode_num_accepted_tokens_total")
			checkSample(t, obs, ep, telemetry.SpecAccept, accepted/delta("vllm:spec_decode_num_draft_tokens_total"))
			checkSample(t, obs, ep, telemetry.SpecAcceptLen, 1+accepted/delta("vllm:spec_decode_num_drafts_total"))
			read := delta("vllm:estimated_read_bytes_per_gpu_total")
			checkSample(t, obs, ep, telemetry.EngineReadBytes, read)
			g, _ := sim.LookupGPU(m.GPU)
			if mb.Approx || !near(mb.Value, read/g.PeakBW) {
				t.Errorf("%s MBU %+v, want measured %v", m.Name, mb, read/g.PeakBW)
			}
			continue
		}
		if !mb.Approx || len(find(obs, telemetry.KindSample, ep, telemetry.SpecAccept)) != 0 {
			t.Errorf("%s: MBU %+v not an estimate, or spec decode without it", m.Name, mb)
		}
	}
}

// waitProgress polls the simulator's page until every model has finished
// a request and queried its prefix cache since the page first.
func waitProgress(t *testing.T, url, first string, models []sim.ModelSpec) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for _, m := range models {
			for _, name := range []string{"vllm:request_success_total", "vllm:prefix_cache_queries_total"} {
				done = done && pageSumOf(t, string(b), name, m.Name) > pageSumOf(t, first, name, m.Name)
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a model finished no request in 30 s")
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}
