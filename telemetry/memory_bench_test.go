package telemetry

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkStore24h feeds 24 h of 1 s data for 50 endpoints, every signal
// (probe samples, scrape histograms and gauges), and reports the live heap
// afterwards. Target: under 100 MB however long ttftop runs.
//
//	go test ./telemetry -run '^$' -bench Store24h -benchtime 1x
func BenchmarkStore24h(b *testing.B) {
	const endpoints, seconds = 50, 24 * 3600
	names := make([]string, endpoints)
	for i := range names {
		names[i] = fmt.Sprintf("host-%02d:8000/model", i)
	}
	ttftBuckets := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	inc := make([]Bucket, len(ttftBuckets)+1)
	for i, ub := range ttftBuckets {
		inc[i] = Bucket{ub, float64(i)}
	}
	inc[len(ttftBuckets)] = Bucket{inf(), float64(len(ttftBuckets))}
	for n := 0; n < b.N; n++ {
		s := NewStore(StoreConfig{})
		for sec := 0; sec < seconds; sec++ {
			at := t0.Add(time.Duration(sec) * time.Second)
			for _, ep := range names {
				for _, sig := range []Signal{TTFT, TPOT, ITL, E2E, OutputTPS, ProbeSuccess} {
					s.Observe(Observation{Kind: KindSample, Endpoint: ep, Signal: sig, Value: 0.1, At: at, Source: "probe:u", Interval: time.Second})
				}
				for _, sig := range []Signal{TTFT, TPOT, ITL, E2E} {
					s.Observe(Observation{Kind: KindHistogram, Endpoint: ep, Signal: sig, Buckets: inc, At: at, Source: "scrape:u", Interval: time.Second})
				}
				for _, sig := range []Signal{OutputTPS, Running, Waiting, KVCache, GPUMemBW, MBU, ErrorRate} {
					s.Observe(Observation{Kind: KindSample, Endpoint: ep, Signal: sig, Value: 0.5, At: at, Source: "scrape:u", Interval: time.Second})
				}
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
		runtime.KeepAlive(s)
	}
}

// BenchmarkHistFleet fills 1 h of histogram increments (every 15 s) for
// 1,000 endpoints × 4 distribution signals with vLLM's 23-bucket layout,
// as a PromQL backfill leaves them, and reports the live heap.
//
//	go test ./telemetry -run '^$' -bench HistFleet -benchtime 1x -benchmem
func BenchmarkHistFleet(b *testing.B) {
	const endpoints, step, span = 1000, 15 * time.Second, time.Hour
	names := make([]string, endpoints)
	for i := range names {
		names[i] = fmt.Sprintf("meta-llama/model-%04d", i)
	}
	bounds := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	inc := make([]Bucket, len(bounds)+1)
	for i, ub := range bounds {
		inc[i] = Bucket{ub, float64(3 * i)}
	}
	inc[len(bounds)] = Bucket{inf(), float64(3 * len(bounds))}
	for n := 0; n < b.N; n++ {
		s := NewStore(StoreConfig{})
		for at := t0; at.Before(t0.Add(span)); at = at.Add(step) {
			for _, ep := range names {
				for _, sig := range []Signal{TTFT, TPOT, ITL, E2E} {
					s.Observe(Observation{Kind: KindHistogram, Endpoint: ep, Signal: sig, Buckets: inc, Value: 1.25, At: at, Source: "promql:u", Interval: step})
				}
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
		runtime.KeepAlive(s)
	}
}
