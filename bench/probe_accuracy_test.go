// Package bench holds ttftop's measurement benchmarks. They print
// figures rather than pass or fail on timing, and run only when asked
// (bench/probe_accuracy.sh sets TTFTOP_PROBE_BENCH=1).
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// The server runs in a child process (this test binary re-executed with
// serverEnv set) so that its CPU is not charged to the probe.
const serverEnv = "TTFTOP_PROBE_ACCURACY_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		if err := serve(); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// --- server side -----------------------------------------------------

// flushLog records, per request id, the wall-clock instant (Unix ns) right
// after each token event was flushed to the socket.
type flushLog struct {
	mu  sync.Mutex
	log map[string][]int64
}

func serve() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fl := &flushLog{log: map[string][]int64{}}
	var ids atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		itl, err1 := time.ParseDuration(r.URL.Query().Get("itl"))
		ttft, err2 := time.ParseDuration(r.URL.Query().Get("ttft"))
		if err1 != nil || err2 != nil {
			http.Error(w, "itl and ttft query parameters required", http.StatusBadRequest)
			return
		}
		id := strconv.FormatInt(ids.Add(1), 10)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Request-Id", id)
		f := w.(http.Flusher)
		stamps := make([]int64, 0, req.MaxTokens)
		write := func(s string) bool {
			if _, err := io.WriteString(w, s); err != nil {
				return false
			}
			f.Flush()
			return true
		}
		// A role-only chunk first: it must not stop TTFT.
		if !write(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n") {
			return
		}
		next := time.Now().Add(ttft)
		for i := range req.MaxTokens {
			time.Sleep(time.Until(next))
			if !write(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" tok` + strconv.Itoa(i) + `"},"finish_reason":null}]}` + "\n\n") {
				return
			}
			stamps = append(stamps, time.Now().UnixNano())
			next = next.Add(itl)
		}
		// Logged before the end is sent: a client may ask for the log as
		// soon as it reads [DONE].
		fl.mu.Lock()
		fl.log[id] = stamps
		fl.mu.Unlock()
		write(`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n" +
			`data: {"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":` +
			strconv.Itoa(req.MaxTokens) + `}}` + "\n\ndata: [DONE]\n\n")
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"data":[{"id":"bench","owned_by":"vllm"}]}`)
	})
	mux.HandleFunc("GET /flushlog", func(w http.ResponseWriter, r *http.Request) {
		fl.mu.Lock()
		defer fl.mu.Unlock()
		_ = json.NewEncoder(w).Encode(fl.log)
		fl.log = map[string][]int64{}
	})
	mux.HandleFunc("GET /rusage", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(cpuTime().Seconds())
	})
	fmt.Printf("LISTEN %s\n", ln.Addr())
	return http.Serve(ln, mux) // ends when the parent kills the process
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// --- client side -----------------------------------------------------

type scenario struct {
	name     string
	streams  int
	tokens   int
	itl      time.Duration
	ttft     time.Duration
	requests int
}

type figures struct {
	ttftMed, ttftP99, itlMed, itlP99, tpotMed, tpotP99 float64 // ms, absolute error
	samples                                            int
	ok, failed                                         int
	clientCores, serverCores                           float64 // CPU seconds per wall second
	bytesPerStream, liveBytesPerStream, stackPerStream float64
}

func TestProbeAccuracy(t *testing.T) {
	if os.Getenv("TTFTOP_PROBE_BENCH") != "1" {
		t.Skip("benchmark: run bench/probe_accuracy.sh (sets TTFTOP_PROBE_BENCH=1)")
	}
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("TTFTOP_PROBE_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	base := startServer(t)
	scenarios := []scenario{
		{name: "1 stream, 50 tok/s", streams: 1, tokens: 50, itl: 20 * time.Millisecond, ttft: 30 * time.Millisecond, requests: 10},
		{name: "500 streams, 50 tok/s each", streams: 500, tokens: 100, itl: 20 * time.Millisecond, ttft: 30 * time.Millisecond, requests: 3000},
	}
	for _, sc := range scenarios {
		var all []figures
		var floorMed, floorP99 []float64
		for i := range runs {
			f := runScenario(t, base, sc)
			all = append(all, f)
			t.Logf("%s run %d: %s", sc.name, i+1, f)
			// The floor runs between probe runs, under the same machine load.
			m, p := runFloor(t, base, sc)
			floorMed, floorP99 = append(floorMed, m), append(floorP99, p)
			t.Logf("%s run %d: floor (raw TCP reader) arrival delay ms med %.3f p99 %.3f", sc.name, i+1, m, p)
		}
		fmt.Printf("%-28s median of %d runs: %s\n", sc.name, runs, medianFigures(all))
		fmt.Printf("%-28s median of %d runs: floor (raw TCP reader, same load) arrival delay ms med %.3f p99 %.3f\n",
			sc.name, runs, q(0.5, floorMed), q(0.5, floorP99))
	}
}

func startServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "LISTEN ") {
		t.Fatalf("server said %q: %v", line, err)
	}
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "LISTEN "))
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func runScenario(t *testing.T, base string, sc scenario) figures {
	opts := probe.Options{
		URL:          fmt.Sprintf("%s/v1/chat/completions?itl=%s&ttft=%s", base, sc.itl, sc.ttft),
		Model:        "bench",
		MaxTokens:    sc.tokens,
		Concurrency:  sc.streams,
		Limits:       probe.Limits{MaxConcurrency: sc.streams, MaxPerMinute: probe.AbsoluteMaxPerMinute},
		Timeout:      time.Minute,
		StallTimeout: 10 * time.Second,
	}
	p, err := probe.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var flushed map[string][]int64
	getJSON(t, base+"/flushlog", &flushed) // clear

	runtime.GC()
	baseMem := memSample()
	wall0 := time.Now()
	if path := os.Getenv("TTFTOP_PROBE_BENCH_CPUPROFILE"); path != "" && sc.streams > 1 {
		pf, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			t.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); _ = pf.Close() }()
	}

	// Streams start spread over one request's duration, so that request
	// starts are spread too (as independent clients' would be) instead of
	// arriving in waves of 500. Figures come from the steady window in
	// which every stream is open: [one request duration, perStream
	// request durations].
	perStream := sc.requests / sc.streams
	dur := sc.ttft + time.Duration(sc.tokens)*sc.itl
	ramp := time.Duration(0)
	if sc.streams > 1 {
		ramp = dur
	}
	winStart, winEnd := wall0.Add(ramp), wall0.Add(time.Duration(perStream)*dur)
	var mu sync.Mutex
	var results []*probe.Result
	var peakMem memStats
	var cpuA, cpuB time.Duration
	var srvA, srvB float64
	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(time.Until(winStart))
		cpuA = cpuTime()
		getJSON(t, base+"/rusage", &srvA)
		for time.Now().Add(time.Second).Before(winEnd) {
			time.Sleep(time.Second)
			if m := memSample(); m.total() > peakMem.total() {
				peakMem = m
			}
			if path := os.Getenv("TTFTOP_PROBE_BENCH_HEAPPROFILE"); path != "" {
				if hf, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(hf, 0)
					_ = hf.Close()
				}
			}
		}
		time.Sleep(time.Until(winEnd))
		cpuB = cpuTime()
		getJSON(t, base+"/rusage", &srvB)
		winEnd = time.Now()
	})
	var runners sync.WaitGroup
	for s := range sc.streams {
		runners.Go(func() {
			time.Sleep(time.Duration(s) * ramp / time.Duration(sc.streams))
			for range perStream {
				r := p.Do(context.Background(), nil)
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
			}
		})
	}
	runners.Wait()
	wg.Wait()
	getJSON(t, base+"/flushlog", &flushed)

	window := winEnd.Sub(winStart).Seconds()
	f := figures{clientCores: (cpuB - cpuA).Seconds() / window, serverCores: (srvB - srvA) / window}
	if sc.streams > 1 {
		f.bytesPerStream = float64(peakMem.inuse-baseMem.inuse) / float64(sc.streams)
		f.liveBytesPerStream = float64(peakMem.total()-baseMem.total()) / float64(sc.streams)
		f.stackPerStream = float64(peakMem.stacks-baseMem.stacks) / float64(sc.streams)
	}
	var ttftErr, itlErr, tpotErr []float64
	bySecond := map[int][]float64{} // arrival delay by second of the run, for diagnosis
	byIndex := map[int][]float64{}
	for _, r := range results {
		if r.Start.Before(winStart) || r.Start.Add(r.Duration).After(winEnd) {
			continue // ramp-up or ramp-down: not every stream was open
		}
		if !r.OK {
			f.failed++
			t.Logf("failed: %s: %s", r.ErrorKind, r.Err)
			continue
		}
		f.ok++
		srv := flushed[r.RequestID]
		if len(srv) != len(r.EventOffsets) || len(srv) < 2 {
			t.Errorf("request %s: %d server events, %d client events", r.RequestID, len(srv), len(r.EventOffsets))
			continue
		}
		start := r.Start.UnixNano() // wall clock: the only clock both processes share
		ttftErr = append(ttftErr, msAbs(float64(start+int64(r.EventOffsets[0])-srv[0])))
		for i := range srv {
			sec := int((srv[i] - wall0.UnixNano()) / 1e9)
			bySecond[sec] = append(bySecond[sec], float64(start+int64(r.EventOffsets[i])-srv[i])/1e6)
			byIndex[min(i, 3)] = append(byIndex[min(i, 3)], float64(start+int64(r.EventOffsets[i])-srv[i])/1e6)
		}
		for i := 1; i < len(srv); i++ {
			client := r.EventOffsets[i] - r.EventOffsets[i-1]
			itlErr = append(itlErr, msAbs(float64(int64(client)-(srv[i]-srv[i-1]))))
		}
		tpot, _ := r.TPOT()
		truth := float64(srv[len(srv)-1]-srv[0]) / float64(r.OutputTokens-1)
		tpotErr = append(tpotErr, msAbs(float64(tpot)-truth))
	}
	if os.Getenv("TTFTOP_PROBE_BENCH_DEBUG") != "" {
		for sec := 0; sec < len(bySecond); sec++ {
			v := bySecond[sec]
			_ = 0
			t.Logf("second %d: %d events, arrival delay ms med %.3f p90 %.3f p99 %.3f max %.3f", sec, len(v), q(0.5, v), q(0.9, v), q(0.99, v), q(1, v))
		}
	}
	if os.Getenv("TTFTOP_PROBE_BENCH_DEBUG") != "" {
		for i := 0; i < 4; i++ {
			v := byIndex[i]
			t.Logf("event index %d: arrival delay ms med %.3f p10 %.3f p90 %.3f p99 %.3f", i, q(0.5, v), q(0.1, v), q(0.9, v), q(0.99, v))
		}
	}
	f.samples = len(itlErr)
	f.ttftMed, f.ttftP99 = q(0.5, ttftErr), q(0.99, ttftErr)
	f.itlMed, f.itlP99 = q(0.5, itlErr), q(0.99, itlErr)
	f.tpotMed, f.tpotP99 = q(0.5, tpotErr), q(0.99, tpotErr)
	return f
}

func msAbs(ns float64) float64 { return math.Abs(ns) / 1e6 }

func q(p float64, v []float64) float64 { return telemetry.SampleQuantile(p, slices.Clone(v)) }

type memStats struct{ inuse, live, stacks uint64 }

// total is the memory a stream really holds: live heap plus goroutine
// stacks (transport read/write loops and the probe's own goroutine).
func (m memStats) total() uint64 { return m.live + m.stacks }

func memSample() memStats {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	metrics.Read(s)
	return memStats{inuse: s[0].Value.Uint64() + s[2].Value.Uint64(), live: s[1].Value.Uint64(), stacks: s[2].Value.Uint64()}
}

func (f figures) String() string {
	s := fmt.Sprintf("abs error ms: TTFT med %.3f p99 %.3f | ITL med %.3f p99 %.3f | TPOT med %.3f p99 %.3f (%d gaps, %d ok, %d failed) | CPU cores: probe %.2f, server %.2f",
		f.ttftMed, f.ttftP99, f.itlMed, f.itlP99, f.tpotMed, f.tpotP99, f.samples, f.ok, f.failed, f.clientCores, f.serverCores)
	if f.bytesPerStream > 0 {
		s += fmt.Sprintf(" | per stream: %.1f KiB live heap+stacks (%.1f KiB stacks), %.1f KiB heap objects+stacks incl. garbage",
			f.liveBytesPerStream/1024, f.stackPerStream/1024, f.bytesPerStream/1024)
	}
	return s
}

func medianFigures(all []figures) figures {
	med := func(get func(figures) float64) float64 {
		v := make([]float64, len(all))
		for i, f := range all {
			v[i] = get(f)
		}
		return q(0.5, v)
	}
	return figures{
		ttftMed: med(func(f figures) float64 { return f.ttftMed }), ttftP99: med(func(f figures) float64 { return f.ttftP99 }),
		itlMed: med(func(f figures) float64 { return f.itlMed }), itlP99: med(func(f figures) float64 { return f.itlP99 }),
		tpotMed: med(func(f figures) float64 { return f.tpotMed }), tpotP99: med(func(f figures) float64 { return f.tpotP99 }),
		samples: int(med(func(f figures) float64 { return float64(f.samples) })),
		ok:      int(med(func(f figures) float64 { return float64(f.ok) })), failed: int(med(func(f figures) float64 { return float64(f.failed) })),
		clientCores: med(func(f figures) float64 { return f.clientCores }), serverCores: med(func(f figures) float64 { return f.serverCores }),
		bytesPerStream: med(func(f figures) float64 { return f.bytesPerStream }), liveBytesPerStream: med(func(f figures) float64 { return f.liveBytesPerStream }),
		stackPerStream: med(func(f figures) float64 { return f.stackPerStream }),
	}
}

// --- floor: a minimal reader -------------------------------------------

// runFloor streams the same scenario with the least client work possible
// (raw HTTP/1.1 over TCP, one read per wake-up, stamp, count events): its
// arrival delays are what this machine's scheduling allows any client,
// so the probe's own contribution is the difference.
func runFloor(t *testing.T, base string, sc scenario) (med, p99 float64) {
	addr := strings.TrimPrefix(base, "http://")
	body := fmt.Sprintf(`{"model":"bench","max_tokens":%d}`, sc.tokens)
	req := fmt.Sprintf("POST /v1/chat/completions?itl=%s&ttft=%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		sc.itl, sc.ttft, addr, len(body), body)
	var flushed map[string][]int64
	getJSON(t, base+"/flushlog", &flushed) // clear
	type stream struct {
		id         string
		stamp      []int64
		start, end time.Time
	}
	var mu sync.Mutex
	var streams []stream
	var wg sync.WaitGroup
	perStream := sc.requests / sc.streams
	dur := sc.ttft + time.Duration(sc.tokens)*sc.itl
	ramp := time.Duration(0)
	if sc.streams > 1 {
		ramp = dur
	}
	wall0 := time.Now()
	winStart, winEnd := wall0.Add(ramp), wall0.Add(time.Duration(perStream)*dur)
	for s := range sc.streams {
		wg.Go(func() {
			time.Sleep(time.Duration(s) * ramp / time.Duration(sc.streams))
			buf := make([]byte, 4096)
			for range perStream {
				begin := time.Now()
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := io.WriteString(conn, req); err != nil {
					t.Error(err)
					return
				}
				st := stream{stamp: make([]int64, 0, sc.tokens), start: begin}
				var acc []byte
				const pattern = `"content":" tok`
				var carry []byte // an event's marker may straddle two reads
				for {
					n, err := conn.Read(buf)
					now := time.Now().UnixNano()
					chunk := append(carry, buf[:n]...)
					if len(chunk) >= len(pattern) {
						carry = append([]byte(nil), chunk[len(chunk)-len(pattern)+1:]...)
					} else {
						carry = append([]byte(nil), chunk...)
					}
					if st.id == "" {
						acc = append(acc, buf[:n]...)
						if i := strings.Index(string(acc), "X-Request-Id: "); i >= 0 {
							if j := strings.Index(string(acc[i:]), "\r\n"); j >= 0 {
								st.id = string(acc[i+len("X-Request-Id: ") : i+j])
							}
						}
					}
					for k := strings.Count(string(chunk), pattern); k > 0; k-- {
						st.stamp = append(st.stamp, now)
					}
					if err != nil || strings.Contains(string(chunk), "[DONE]") {
						break
					}
				}
				_ = conn.Close()
				st.end = time.Now()
				mu.Lock()
				streams = append(streams, st)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	getJSON(t, base+"/flushlog", &flushed)
	var delay []float64
	for _, st := range streams {
		if st.start.Before(winStart) || st.end.After(winEnd) {
			continue // ramp-up or ramp-down
		}
		srv := flushed[st.id]
		if len(srv) != len(st.stamp) {
			t.Errorf("floor: request %q: %d server events, %d read", st.id, len(srv), len(st.stamp))
			continue
		}
		for i := range srv {
			delay = append(delay, msAbs(float64(st.stamp[i]-srv[i])))
		}
	}
	return q(0.5, delay), q(0.99, delay)
}
