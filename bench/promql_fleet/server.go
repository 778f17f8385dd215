//go:build unix

package main

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// fleet answers the default PromQL queries for n vLLM endpoints, shaped
// like the simulator's exposition: vLLM's bucket layouts, counters growing
// with time (so any two evaluation times difference into real windows),
// gauges (instant, and as range answers for their history), and each
// endpoint's newest sample 2 s old. It stands in for a Prometheus holding
// a 1,000-endpoint fleet, so that the benchmark
// measures ttftop, not the server.
type fleet struct {
	n        int
	started  time.Time // every target's process start
	requests atomic.Int64
	points   atomic.Int64 // range points served
}

// Bucket layouts as vLLM exposes them (internal/sim/histogram.go).
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	e2eBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
		40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

// histogramOf picks the histogram a range query asks for.
func histogramOf(q string) ([]float64, float64, bool) {
	switch {
	case strings.Contains(q, "vllm:time_to_first_token_seconds_bucket"):
		return ttftBuckets, 0.12, true
	case strings.Contains(q, "vllm:request_time_per_output_token_seconds_bucket"):
		return itlBuckets, 0.03, true
	case strings.Contains(q, "vllm:inter_token_latency_seconds_bucket"):
		return itlBuckets, 0.03, true
	case strings.Contains(q, "vllm:e2e_request_latency_seconds_bucket"):
		return e2eBuckets, 4, true
	}
	return nil, 0, false
}

func (f *fleet) model(i int) string { return fmt.Sprintf("org/model-%04d", i) }

// perSecond is endpoint i's request rate.
func perSecond(i int) float64 { return 1 + float64(i%7) }

// cdf is the share of observations at or under ub, for a distribution
// with median med (log-logistic).
func cdf(ub, med float64) float64 {
	if math.IsInf(ub, 1) {
		return 1
	}
	x := ub / med
	return x * x / (1 + x*x)
}

func (f *fleet) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path == "/stats" {
		fmt.Fprintf(w, "%d %d\n", f.requests.Load(), f.points.Load())
		return
	}
	f.requests.Add(1)
	q := r.Form.Get("query")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/api/v1/query"):
		_, _ = w.Write(f.instant(q, time.Now()))
	case strings.HasSuffix(r.URL.Path, "/api/v1/query_range"):
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		_, _ = w.Write(f.matrix(q, start, end, step))
	case strings.Contains(r.URL.Path, "/api/v1/label/"):
		_, _ = w.Write([]byte(`{"status":"success","data":["vllm:num_requests_running","vllm:time_to_first_token_seconds_bucket"]}`))
	default:
		http.NotFound(w, r)
	}
}

// valueOf is endpoint i's value of a gauge query, nil for other queries.
func valueOf(q string) func(i int) float64 {
	switch {
	case strings.Contains(q, "vllm:num_requests_running"):
		return func(i int) float64 { return float64(i % 17) }
	case strings.Contains(q, "vllm:num_requests_waiting"):
		return func(i int) float64 { return float64(i % 3) }
	case strings.Contains(q, "vllm:kv_cache_usage_perc"):
		return func(i int) float64 { return float64(i%100) / 100 }
	case strings.Contains(q, "vllm:generation_tokens_total"):
		return func(i int) float64 { return 150 * perSecond(i) }
	case strings.Contains(q, "vllm:request_success_total"):
		return func(int) float64 { return 0.01 }
	}
	return nil
}

func (f *fleet) instant(q string, now time.Time) []byte {
	ts := float64(now.UnixMilli()) / 1000
	value := valueOf(q)
	if strings.Contains(q, "timestamp(") {
		newest := float64(now.Add(-2*time.Second).UnixMilli()) / 1000
		value = func(int) float64 { return newest }
	}
	b := []byte(`{"status":"success","data":{"resultType":"vector","result":[`)
	if strings.Contains(q, "(up)") {
		// Target health: one up series per target, by instance, and its
		// process start (the stand-in's endpoints are models without
		// replicas: nothing joins, the answer is read and costs what it
		// costs).
		starts := strings.Contains(q, "process_start_time_seconds")
		for i := range f.n {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"metric":{"instance":"10.%d.%d.%d:8000"},"value":[`, i>>16&255, i>>8&255, i&255)
			b = strconv.AppendFloat(b, ts, 'f', 3, 64)
			b = append(b, `,"1"]}`...)
			if starts {
				b = fmt.Appendf(b, `,{"metric":{"instance":"10.%d.%d.%d:8000","ttftop_part":"start"},"value":[`, i>>16&255, i>>8&255, i&255)
				b = strconv.AppendFloat(b, ts, 'f', 3, 64)
				b = fmt.Appendf(b, `,"%d"]}`, f.started.Unix())
			}
		}
		return append(b, `]}}`...)
	}
	if value != nil {
		for i := range f.n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"metric":{"model_name":"`...)
			b = append(b, f.model(i)...)
			b = append(b, `","ttftop_engine":"vllm"},"value":[`...)
			b = strconv.AppendFloat(b, ts, 'f', 3, 64)
			b = append(b, `,"`...)
			b = strconv.AppendFloat(b, value(i), 'f', -1, 64)
			b = append(b, `"]}`...)
		}
	}
	return append(b, `]}}`...)
}

func (f *fleet) matrix(q string, start, end, step float64) []byte {
	b := []byte(`{"status":"success","data":{"resultType":"matrix","result":[`)
	bounds, med, ok := histogramOf(q)
	value := valueOf(q)
	if (!ok && value == nil) || step <= 0 {
		return append(b, `]}}`...)
	}
	// Every series shares the grid: its timestamps are formatted once.
	var grid []float64
	var stamps [][]byte
	for t := start; t <= end+1e-9; t += step {
		grid = append(grid, t)
		stamps = append(stamps, strconv.AppendFloat(nil, t, 'f', 3, 64))
	}
	first := true
	series := func(i int, labels string, v func(t float64) float64) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"metric":{"model_name":"`...)
		b = append(b, f.model(i)...)
		b = append(b, `","ttftop_engine":"vllm"`...)
		b = append(b, labels...)
		b = append(b, `},"values":[`...)
		for k, t := range grid {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = append(b, stamps[k]...)
			b = append(b, `,"`...)
			b = appendValue(b, v(t))
			b = append(b, `"]`...)
		}
		f.points.Add(int64(len(grid)))
		b = append(b, `]}`...)
	}
	if !ok { // a gauge query's history: its value at every step
		for i := range f.n {
			v := value(i)
			series(i, "", func(float64) float64 { return v })
		}
		return append(b, `]}}`...)
	}
	for i := range f.n {
		rate := perSecond(i)
		for _, ub := range append(append([]float64(nil), bounds...), math.Inf(1)) {
			share := cdf(ub, med)
			le := strconv.FormatFloat(ub, 'g', -1, 64)
			if math.IsInf(ub, 1) {
				le = "+Inf"
			}
			series(i, `,"le":"`+le+`"`, func(t float64) float64 { return math.Floor(rate * t * share) })
		}
		series(i, `,"ttftop_part":"sum"`, func(t float64) float64 { return rate * t * med })
		series(i, `,"ttftop_part":"series"`, func(float64) float64 { return 1 })
	}
	return append(b, `]}}`...)
}

// appendValue formats v as Prometheus does; whole numbers (counters,
// bucket counts) the cheap way, so the stand-in spends less of the
// machine than the source it serves.
func appendValue(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// listen serves the fleet on a loopback port and returns its URL.
func (f *fleet) listen() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(f.serve)}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}
