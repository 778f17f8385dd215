package sim

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchSpec is a model whose decode step is 20 ms (50 tokens/s per stream)
// with perModel sequences of ~300 resident tokens: the weights take 16 ms
// and the KV the other 4.
func benchSpec(name string, perModel int) ModelSpec {
	const peak, eff = 3.35e12, 0.5
	bw := peak * eff
	return ModelSpec{
		Name: name, Params: 0.016 * bw / 2, DtypeBytes: 2,
		KVBytesPerToken: 0.004 * bw / float64(perModel) / 300,
		GPU:             "H100 SXM", Efficiency: eff, PrefillTokensPerSec: 5e6,
		MaxBatch: perModel, MaxQueue: perModel, MaxBatchedTokens: 65536,
	}
}

// runScheduleBench drives n concurrent streams spread over models engines,
// through HTTP/1.1 SSE (one socket each) or the in-process API, and returns
// the server's schedule-error stats over measure (after warm-up) and the
// mean step time.
func runScheduleBench(tb testing.TB, n, models int, measure time.Duration, httpMode bool) (ScheduleStats, time.Duration) {
	var specs []ModelSpec
	for i := 0; i < models; i++ {
		specs = append(specs, benchSpec(fmt.Sprintf("bench-%d", i), n/models))
	}
	s, err := New(Config{Models: specs})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if err := s.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}}
	defer client.CloseIdleConnections()
	maxTokens := int((measure + 4*time.Second) / (20 * time.Millisecond))
	var started, wg sync.WaitGroup
	started.Add(n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			model := specs[i%models].Name
			prompt := fmt.Sprintf("%04d %s", i, strings.Repeat("word ", 220)) // ~280 tokens, distinct
			first := true
			mark := func() {
				if first {
					first = false
					started.Done()
				}
			}
			defer mark()
			if !httpMode {
				st, err := s.Generate(ctx, Request{Model: model, Prompt: prompt, MaxTokens: maxTokens, IgnoreEOS: true})
				if err != nil {
					tb.Error(err)
					return
				}
				for {
					toks, fin, err := st.Recv()
					if len(toks) > 0 {
						mark()
					}
					if err != nil || fin != "" {
						return
					}
				}
			}
			body := fmt.Sprintf(`{"model":%q,"stream":true,"ignore_eos":true,"max_tokens":%d,"prompt":%q}`, model, maxTokens, prompt)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/completions", strings.NewReader(body))
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 4096)
			for {
				if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
					return
				}
				mark()
			}
		}()
		switch {
		case i < models-1:
			// Each engine's step clock starts with its first request, so
			// spacing the first request per model spreads the engines'
			// phases across the 20 ms step, as independently started
			// models (or data-parallel ranks) have.
			time.Sleep(20 * time.Millisecond / time.Duration(models))
		case i%50 == 49:
			time.Sleep(10 * time.Millisecond) // ramp up like real clients
		}
	}
	started.Wait()
	time.Sleep(500 * time.Millisecond)
	s.ResetScheduleErrors()
	steps0 := totalSteps(s)
	t0 := time.Now()
	time.Sleep(measure)
	st := s.ScheduleErrors()
	steps := totalSteps(s) - steps0
	elapsed := time.Since(t0)
	tb.Logf("engine wake error: %+v", s.StepWakeErrors())
	cancel()
	wg.Wait()
	if steps == 0 {
		tb.Fatal("no steps")
	}
	return st, elapsed * time.Duration(models) / time.Duration(steps)
}

func totalSteps(s *Server) int64 {
	var n int64
	for _, st := range s.Stats() {
		n += st.Steps
	}
	return n
}

// BenchmarkSchedule1000Streams measures the simulator's token schedule
// error (flush time − step deadline) with 1,000 concurrent HTTP/1.1 SSE
// streams at 50 tokens/s on one model, clients in the same process. Run
// with -benchtime=1x (see bench/sim_schedule.sh).
func BenchmarkSchedule1000Streams(b *testing.B) { benchSchedule(b, 1000, 1, true) }

// BenchmarkSchedule1000StreamsInProcess is the same load through the Go
// API (no sockets): the engine loop and hand-off alone.
func BenchmarkSchedule1000StreamsInProcess(b *testing.B) { benchSchedule(b, 1000, 1, false) }

// BenchmarkSchedule200Streams is the HTTP case at a fifth of the load, for
// scale: the error is mostly the kernel cost of the per-step socket writes.
func BenchmarkSchedule200Streams(b *testing.B) { benchSchedule(b, 200, 1, true) }

// BenchmarkSchedule1000Streams10Models spreads the 1,000 HTTP streams over
// ten models (engines step at different phases, as several served models
// do), so each step fans out to 100 sockets.
func BenchmarkSchedule1000Streams10Models(b *testing.B) { benchSchedule(b, 1000, 10, true) }

func benchSchedule(b *testing.B, n, models int, httpMode bool) {
	for i := 0; i < b.N; i++ {
		st, step := runScheduleBench(b, n, models, 5*time.Second, httpMode)
		b.ReportMetric(float64(st.P50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(st.P99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(st.Max.Microseconds())/1000, "max-ms")
		b.ReportMetric(float64(step.Microseconds())/1000, "step-ms")
		b.Logf("schedule error over %d tokens: p50 %v p90 %v p99 %v max %v; mean step %v",
			st.Count, st.P50, st.P90, st.P99, st.Max, step)
	}
}

// BenchmarkScheduleFloor1000 is the machine's floor under the HTTP figure:
// no simulator and no HTTP, only 1,000 loopback TCP connections, each
// written one SSE-sized chunk by its own goroutine every 20 ms, all due at
// the same instant (as one engine step's tokens are), and read by a client
// goroutine in the same process. Its error (write return − due time) is
// what the simulator cannot go below on this machine.
func BenchmarkScheduleFloor1000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		st := runFloorBench(b, 1000, 5*time.Second)
		b.ReportMetric(float64(st.P50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(st.P99.Microseconds())/1000, "p99-ms")
		b.Logf("schedule error over %d tokens: p50 %v p90 %v p99 %v max %v (raw TCP floor, no simulator)",
			st.Count, st.P50, st.P90, st.P99, st.Max)
	}
}

func runFloorBench(tb testing.TB, n int, measure time.Duration) ScheduleStats {
	const step, warm = 20 * time.Millisecond, time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	steps := int((warm + measure) / step)
	due := make([]chan struct{}, steps)
	for k := range due {
		due[k] = make(chan struct{})
	}
	chunk := []byte("f0\r\ndata: " + strings.Repeat("x", 226) + "\n\n\r\n")
	var start time.Time // set once every connection is up; read after due[0]
	now := func() int64 { return int64(time.Since(start)) }
	dueAt := func(k int) int64 { return int64(warm)/2 + int64(k)*int64(step) }
	var hist schedHist
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			tb.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			tb.Fatal(err)
		}
		wg.Add(2)
		go func() { // client
			defer wg.Done()
			defer c.Close()
			r := bufio.NewReaderSize(c, 4096)
			for {
				if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
					return
				}
			}
		}()
		go func() { // server side of one stream
			defer wg.Done()
			defer s.Close()
			for k := range due {
				<-due[k]
				if _, err := s.Write(chunk); err != nil {
					return
				}
				if time.Duration(dueAt(k)) >= warm {
					hist.record(time.Duration(now() - dueAt(k)))
				}
			}
		}()
	}
	start = time.Now()
	for k := range due { // the "engine": wakes precisely, then releases the step
		if d := time.Duration(dueAt(k)-now()) - spinSlack; d > 0 {
			preciseSleep(d)
		}
		for now() < dueAt(k) {
		}
		close(due[k])
	}
	wg.Wait()
	return hist.stats()
}

// BenchmarkServeMetrics renders the demo's /metrics (four models, vLLM
// format), what every scrape of the demo costs the simulator.
func BenchmarkServeMetrics(b *testing.B) {
	s, err := New(DemoConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.serveMetrics(w, req)
		if w.Code != http.StatusOK || w.Body.Len() == 0 {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkStreamChunk is the simulator's per-token work for an HTTP
// stream: the token's text and its SSE chunk.
func BenchmarkStreamChunk(b *testing.B) {
	f := newChunkFormat(true, "chatcmpl-00ff", 1733000000, DemoHealthy)
	sq := &seq{textSeed: 0x5157e3}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		text, reasoning := sq.tokenAt(i % 512)
		buf = f.token(buf[:0], text, "", reasoning)
		i++
	}
}
