package record

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// The replay benchmarks run on a generated recording of benchHours (env
// TTFTOP_BENCH_HOURS, default 24) of 50 endpoints at realistic rates:
// a probe every 10 s per endpoint (TTFT, TPOT, E2E, tok/s, 63 ITL samples,
// success, the probe record, source status: what probe.Runner emits for a
// 64-token answer) and a scrape every 5 s (four latency histograms with
// vLLM's buckets, running, waiting, KV cache, tok/s, source status). The
// file is cached in TTFTOP_BENCH_DIR (default the system temp dir), as
// generating a day takes minutes.
//
//	go test ./record -run '^$' -bench Replay -benchtime 1x -timeout 60m

const benchEndpoints = 50

func benchHours() int {
	if h, err := strconv.Atoi(os.Getenv("TTFTOP_BENCH_HOURS")); err == nil && h > 0 {
		return h
	}
	return 24
}

func benchStart() time.Time { return time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC) }

// benchRecording returns the cached recording, generating it if needed.
func benchRecording(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("TTFTOP_BENCH_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	hours := benchHours()
	path := filepath.Join(dir, fmt.Sprintf("ttftop-bench-%dep-%dh.v1.jsonl.gz", benchEndpoints, hours))
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	for _, p := range []string{path, indexPath(path)} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
	}
	start := time.Now()
	w, err := NewWriter(path)
	if err != nil {
		b.Fatal(err)
	}
	generate(w, benchStart(), time.Duration(hours)*time.Hour, benchEndpoints)
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path+".done", nil, 0o644); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	s := w.Stats()
	b.Logf("generated %s: %d h, %d endpoints, %d observations, %d lines, %.1f MiB gzip, in %s",
		path, hours, benchEndpoints, s.Observations, s.Lines, float64(fi.Size())/(1<<20), time.Since(start).Round(time.Second))
	return path
}

// generate feeds w span of observations for n endpoints, in time order,
// never outrunning the writer's flusher.
func generate(w *Writer, start time.Time, span time.Duration, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := make([]string, n)
	probeSrc := make([]string, n)
	scrapeSrc := make([]string, n)
	for i := range names {
		host := fmt.Sprintf("10.0.%d.%d:8000", i/250, i%250)
		names[i] = host + "/meta-llama/Llama-3.1-8B-Instruct"
		probeSrc[i] = "probe:http://" + host + "/v1/chat/completions"
		scrapeSrc[i] = "scrape:http://" + host + "/metrics"
		w.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: start, Endpoint: names[i], Source: probeSrc[i], Interval: 10 * time.Second,
			Info: &telemetry.Endpoint{Name: names[i], BaseURL: "http://" + host, Model: "meta-llama/Llama-3.1-8B-Instruct", Engine: telemetry.EngineVLLM}})
	}
	for s := 0; s < int(span/time.Second); s++ {
		for w.backlog() > 16<<20 {
			time.Sleep(time.Millisecond)
		}
		for i := 0; i < n; i++ {
			at := start.Add(time.Duration(s)*time.Second + time.Duration(i)*10*time.Millisecond)
			if (s+i)%10 == 0 {
				genProbe(w, rng, at, names[i], probeSrc[i])
			}
			if (s+i)%5 == 0 {
				genScrape(w, rng, at, names[i], scrapeSrc[i])
			}
		}
	}
}

func genProbe(w *Writer, rng *rand.Rand, at time.Time, ep, src string) {
	obs := func(kind telemetry.Kind, sig telemetry.Signal, v float64) telemetry.Observation {
		return telemetry.Observation{Kind: kind, At: at, Endpoint: ep, Signal: sig, Source: src, Value: v, Interval: 10 * time.Second}
	}
	var rec telemetry.ProbeRecord
	if rng.Float64() < 0.01 {
		w.Observe(obs(telemetry.KindSample, telemetry.ProbeSuccess, 0))
		f := obs(telemetry.KindFailure, "", 0)
		f.Err = "timeout: no token within 30s"
		w.Observe(f)
		rec = telemetry.ProbeRecord{ErrorKind: "timeout", Error: "no token within 30s"}
	} else {
		ttft := 0.08 + rng.ExpFloat64()*0.05
		itl := make([]float64, 63)
		var sum float64
		for k := range itl {
			itl[k] = 0.012 + rng.Float64()*0.006
			sum += itl[k]
		}
		tpot := sum / 63
		w.Observe(obs(telemetry.KindSample, telemetry.TTFT, ttft))
		w.Observe(obs(telemetry.KindSample, telemetry.TPOT, tpot))
		w.Observe(obs(telemetry.KindSample, telemetry.E2E, ttft+sum))
		w.Observe(obs(telemetry.KindSample, telemetry.OutputTPS, 1/tpot))
		rec = telemetry.ProbeRecord{OK: true, TTFTms: ttft * 1000, TPOTms: tpot * 1000, E2Ems: (ttft + sum) * 1000, OutputTokens: 64, TokensSource: "usage"}
		for _, g := range itl {
			w.Observe(obs(telemetry.KindSample, telemetry.ITL, g))
			rec.ITLms = append(rec.ITLms, g*1000)
		}
		w.Observe(obs(telemetry.KindSample, telemetry.ProbeSuccess, 1))
	}
	p := obs(telemetry.KindProbe, "", 0)
	p.Probe = &rec
	w.Observe(p)
	st := obs(telemetry.KindSource, "", 0)
	st.Status = &telemetry.SourceStatus{Name: src, Kind: "probe", State: telemetry.Live, LastOK: at, Latency: 1200 * time.Millisecond}
	w.Observe(st)
}

// vLLM V1's bucket bounds (docs/engines.md).
func genBounds() (ttft, itl, e2e []float64) {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0},
		[]float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0},
		[]float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
}

func genScrape(w *Writer, rng *rand.Rand, at time.Time, ep, src string) {
	ttftBounds, itlBounds, e2eBounds := genBounds()
	obs := func(kind telemetry.Kind, sig telemetry.Signal, v float64) telemetry.Observation {
		return telemetry.Observation{Kind: kind, At: at, Endpoint: ep, Signal: sig, Source: src, Value: v, Interval: 5 * time.Second}
	}
	hist := func(sig telemetry.Signal, bounds []float64, scale float64, n int) {
		b := make([]telemetry.Bucket, 0, len(bounds)+1)
		var sum, acc float64
		counts := make([]float64, len(bounds)+1)
		for k := 0; k < n; k++ {
			v := scale * (0.5 + rng.ExpFloat64())
			sum += v
			j := 0
			for j < len(bounds) && v > bounds[j] {
				j++
			}
			counts[j]++
		}
		for j, ub := range bounds {
			acc += counts[j]
			b = append(b, telemetry.Bucket{UpperBound: ub, Count: acc})
		}
		b = append(b, telemetry.Bucket{UpperBound: math.Inf(1), Count: acc + counts[len(bounds)]})
		o := obs(telemetry.KindHistogram, sig, sum)
		o.Buckets = b
		w.Observe(o)
	}
	hist(telemetry.TTFT, ttftBounds, 0.1, 20)
	hist(telemetry.TPOT, itlBounds, 0.015, 20)
	hist(telemetry.ITL, itlBounds, 0.015, 400)
	hist(telemetry.E2E, e2eBounds, 2, 20)
	w.Observe(obs(telemetry.KindSample, telemetry.Running, float64(rng.IntN(64))))
	w.Observe(obs(telemetry.KindSample, telemetry.Waiting, float64(rng.IntN(4))))
	w.Observe(obs(telemetry.KindSample, telemetry.KVCache, rng.Float64()))
	w.Observe(obs(telemetry.KindSample, telemetry.OutputTPS, 1500+rng.Float64()*500))
	st := obs(telemetry.KindSource, "", 0)
	st.Status = &telemetry.SourceStatus{Name: src, Kind: "scrape", State: telemetry.Live, LastOK: at, Latency: 8 * time.Millisecond}
	w.Observe(st)
}

func newStoreSink() telemetry.Sink { return telemetry.NewStore(telemetry.StoreConfig{}) }

// BenchmarkReplayStart measures how long a replay takes to start at the
// start, middle and end of the recording: NewPlayer (index, bounds) and
// Seek until the first frame's snapshot (5-minute window) is available,
// then until the full hour of history has been swapped in. Also
// SnapshotAt (`replay --json --at`), and the same start without the index.
func BenchmarkReplayStart(b *testing.B) {
	path := benchRecording(b)
	for _, p := range []string{path, indexPath(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %.1f MiB", filepath.Base(p), float64(fi.Size())/(1<<20))
	}
	first, last, err := Bounds(path)
	if err != nil {
		b.Fatal(err)
	}
	points := []struct {
		name string
		t    time.Time
	}{{"start", first}, {"middle", first.Add(last.Sub(first) / 2)}, {"end", last}}
	for _, pt := range points {
		b.Run("seek-"+pt.name, func(b *testing.B) {
			var frame, full time.Duration
			for b.Loop() {
				start := time.Now()
				p, err := NewPlayer(path, PlayerOptions{NewSink: newStoreSink})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Seek(pt.t); err != nil {
					b.Fatal(err)
				}
				snap := p.Sink().(*telemetry.Store).Snapshot(pt.t, DefaultWindow)
				frame += time.Since(start)
				if len(snap.Endpoints) != benchEndpoints {
					b.Fatalf("%d endpoints in the first frame", len(snap.Endpoints))
				}
				first := p.Sink()
				for p.Sink() == first && pt.t.Sub(benchStart()) > DefaultWindow {
					time.Sleep(5 * time.Millisecond)
				}
				full += time.Since(start)
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(frame.Seconds()/float64(b.N), "s/first-frame")
			b.ReportMetric(full.Seconds()/float64(b.N), "s/full-history")
		})
	}
	b.Run("snapshot-at-end", func(b *testing.B) {
		for b.Loop() {
			snap, err := SnapshotAt(path, time.Time{}, DefaultWindow)
			if err != nil || len(snap.Endpoints) != benchEndpoints {
				b.Fatalf("%d endpoints: %v", len(snap.Endpoints), err)
			}
		}
	})
	b.Run("seek-middle-no-index", func(b *testing.B) {
		hidden := indexPath(path) + ".hidden"
		if err := os.Rename(indexPath(path), hidden); err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := os.Rename(hidden, indexPath(path)); err != nil {
				b.Fatal(err)
			}
		}()
		for b.Loop() {
			p, err := NewPlayer(path, PlayerOptions{NewSink: newStoreSink, History: DefaultWindow})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Seek(points[1].t); err != nil {
				b.Fatal(err)
			}
			if err := p.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReplayFromStart is the naive seek for comparison: replay the
// whole recording from its start into a fresh store as fast as possible.
func BenchmarkReplayFromStart(b *testing.B) {
	path := benchRecording(b)
	for b.Loop() {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		store := telemetry.NewStore(telemetry.StoreConfig{})
		n := 0
		for {
			o, err := r.Next()
			if err != nil {
				break
			}
			store.Observe(o)
			n++
		}
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n), "observations")
	}
}

// BenchmarkWriterObserve is the recording cost of one observation (a probe
// ITL sample, the most common line): encoding in the caller plus the
// flusher's compression and writes, all included by closing the writer
// inside the timed loop's span.
func BenchmarkWriterObserve(b *testing.B) {
	for _, name := range []string{"plain.jsonl", "gzip.jsonl.gz"} {
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), name)
			w, err := NewWriter(path)
			if err != nil {
				b.Fatal(err)
			}
			o := telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "10.0.0.7:8000/meta-llama/Llama-3.1-8B-Instruct",
				Signal: telemetry.ITL, Source: "probe:http://10.0.0.7:8000/v1/chat/completions", Interval: 10 * time.Second}
			at := benchStart()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				o.At, o.Value = at.Add(time.Duration(i)*time.Millisecond), 0.012+float64(i%1000)/1e6
				w.Observe(o)
				if i%4096 == 0 {
					for w.backlog() > 16<<20 {
						time.Sleep(time.Millisecond)
					}
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			fi, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/float64(b.N), "file-B/obs")
		})
	}
}
