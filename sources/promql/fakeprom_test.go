package promql

import (
	"encoding/json"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/telemetry/telemetrytest"
)

// fakeSeries is one result series of the fake API.
type fakeSeries struct {
	labels map[string]string
	value  float64 // constant value
	// perSecond, when set, makes the series a counter: perSecond × Unix
	// time, so a 10s step adds 10 × perSecond.
	perSecond float64
	// seq, when set, gives the values of a range answer's points in order.
	seq []float64
	// born, when set, drops range points before it: a young series.
	born time.Time
}

func (s fakeSeries) at(t time.Time) float64 {
	if s.perSecond != 0 {
		return s.perSecond * float64(t.UnixMilli()) / 1000
	}
	return s.value
}

// fakeProm fakes the Prometheus HTTP API: /api/v1/query, /query_range and
// /label/<name>/values. By default it answers the default queries with
// vLLM data for its models; hooks override single answers.
type fakeProm struct {
	srv *httptest.Server

	mu       sync.Mutex
	models   []string
	requests int
	byPath   map[string]int
	headers  []http.Header
	queries  []string
	// hook may answer a request itself; it returns false to fall through.
	hook     func(w http.ResponseWriter, r *http.Request, query string) bool
	warnings []string
	infos    []string
	// values overrides the instant value of a signal's vLLM metric.
	values map[string]float64
	// forms records the form of every request.
	forms []map[string][]string
	// clock is the server's clock.
	clock func() time.Time
	// lag delays what queries see, as a lagging store does: a model's
	// newest sample is lag (lags[model] when set) + 2s old, and range
	// points newer than now − lag are dropped, or, with fillLagged, carry
	// the value of the last older point (VictoriaMetrics'
	// -search.latencyOffset).
	lag        time.Duration
	lags       map[string]time.Duration
	fillLagged bool
	// born gives a model's series no range points before that time.
	born map[string]time.Time
	// instances puts a model's series on a replica: an instance label,
	// so that the model is a model row over that one replica.
	instances map[string]string
}

func newFakeProm(t *testing.T, models ...string) *fakeProm {
	t.Helper()
	f := &fakeProm{models: models, byPath: map[string]int{}, values: map[string]float64{}, clock: time.Now}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProm) URL() string { return f.srv.URL }

func (f *fakeProm) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

func (f *fakeProm) set(fn func(f *fakeProm)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeProm) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests++
	f.byPath[r.URL.Path]++
	f.headers = append(f.headers, r.Header.Clone())
	q := r.Form.Get("query")
	f.queries = append(f.queries, q)
	f.forms = append(f.forms, r.Form)
	now := f.clock()
	hook, models := f.hook, append([]string(nil), f.models...)
	warnings, infos := f.warnings, f.infos
	lagOf, fill := func(string) time.Duration { return 0 }, f.fillLagged
	if f.lag != 0 || len(f.lags) != 0 {
		lags := map[string]time.Duration{}
		for k, v := range f.lags {
			lags[k] = v
		}
		lag := f.lag
		lagOf = func(m string) time.Duration {
			if d, ok := lags[m]; ok {
				return d
			}
			return lag
		}
	}
	values := map[string]float64{}
	for k, v := range f.values {
		values[k] = v
	}
	onInstances := func(ss []fakeSeries) []fakeSeries { return ss }
	if len(f.instances) > 0 {
		instances := maps.Clone(f.instances)
		onInstances = func(ss []fakeSeries) []fakeSeries {
			for i, s := range ss {
				if inst, ok := instances[s.labels["model_name"]]; ok {
					s.labels = maps.Clone(s.labels)
					s.labels["instance"] = inst
					ss[i] = s
				}
			}
			return ss
		}
	}
	f.mu.Unlock()

	if hook != nil && hook(w, r, q) {
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/api/v1/query"):
		writeVector(w, now, onInstances(instantAnswer(q, models, now, values, lagOf)), warnings, infos)
	case strings.HasSuffix(r.URL.Path, "/api/v1/query_range"):
		start, end, step := parseRange(r)
		cutoff := func(m map[string]string) time.Time { return now.Add(-lagOf(m["model_name"])) }
		f.mu.Lock()
		ss := onInstances(rangeAnswer(q, models, f.born))
		f.mu.Unlock()
		writeLaggedMatrix(w, ss, start, end, step, cutoff, fill, warnings, infos)
	case strings.Contains(r.URL.Path, "/api/v1/label/"):
		writeJSON(w, http.StatusOK, map[string]any{"status": "success", "data": []string{"vllm:num_requests_running", "vllm:time_to_first_token_seconds_bucket"}})
	default:
		http.NotFound(w, r)
	}
}

// instantAnswer answers the default instant queries with vLLM series.
func instantAnswer(q string, models []string, now time.Time, values map[string]float64, lagOf func(string) time.Duration) []fakeSeries {
	var metric string
	switch {
	case strings.Contains(q, "timestamp("):
		metric = "timestamp"
	case strings.Contains(q, "vllm:num_requests_running"):
		metric = "running"
	case strings.Contains(q, "vllm:num_requests_waiting"):
		metric = "waiting"
	case strings.Contains(q, "vllm:kv_cache_usage_perc"):
		metric = "kv"
	case strings.Contains(q, "vllm:generation_tokens_total"):
		metric = "tps"
	case strings.Contains(q, "vllm:request_success_total"):
		metric = "err"
	default:
		return nil // DCGM and anything else: empty
	}
	var out []fakeSeries
	for i, m := range models {
		v := map[string]float64{"running": 3, "waiting": 1, "kv": 0.25, "tps": 120.5, "err": 0.01}[metric] + float64(i)
		if metric == "timestamp" {
			v = float64(now.Add(-lagOf(m)-2*time.Second).UnixMilli()) / 1000
		}
		if o, ok := values[metric]; ok {
			v = o
		}
		out = append(out, fakeSeries{labels: map[string]string{"model_name": m, "ttftop_engine": "vllm"}, value: v})
	}
	return out
}

// rangeAnswer answers histogram queries: per model, cumulative buckets 0.1,
// 0.5, +Inf growing by 10, 30, 40 observations per 10s, a _sum growing by 8
// and one series.
func rangeAnswer(q string, models []string, born map[string]time.Time) []fakeSeries {
	if !strings.Contains(q, "vllm:time_to_first_token_seconds_bucket") && !strings.Contains(q, "vllm:e2e_request_latency_seconds_bucket") {
		return nil
	}
	var out []fakeSeries
	for _, m := range models {
		for _, b := range []struct {
			le string
			n  float64
		}{{"0.1", 10}, {"0.5", 30}, {"+Inf", 40}} {
			out = append(out, fakeSeries{labels: map[string]string{"model_name": m, "ttftop_engine": "vllm", "le": b.le}, perSecond: b.n / 10, born: born[m]})
		}
		out = append(out, fakeSeries{labels: map[string]string{"model_name": m, "ttftop_engine": "vllm", "ttftop_part": "sum"}, perSecond: 0.8, born: born[m]},
			fakeSeries{labels: map[string]string{"model_name": m, "ttftop_engine": "vllm", "ttftop_part": "series"}, value: 1, born: born[m]})
	}
	return out
}

func parseRange(r *http.Request) (start, end time.Time, step time.Duration) {
	f := func(k string) float64 {
		v, err := strconv.ParseFloat(r.Form.Get(k), 64)
		if err != nil {
			return 0
		}
		return v
	}
	toTime := func(s float64) time.Time { return time.UnixMilli(int64(math.Round(s * 1000))) }
	return toTime(f("start")), toTime(f("end")), time.Duration(f("step") * float64(time.Second))
}

func promValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func promTime(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func writeVector(w http.ResponseWriter, at time.Time, ss []fakeSeries, warnings, infos []string) {
	res := []map[string]any{}
	for _, s := range ss {
		res = append(res, map[string]any{"metric": s.labels, "value": []any{promTime(at), promValue(s.at(at))}})
	}
	writeSuccess(w, "vector", res, warnings, infos)
}

func writeMatrix(w http.ResponseWriter, ss []fakeSeries, start, end time.Time, step time.Duration, warnings, infos []string) {
	writeLaggedMatrix(w, ss, start, end, step, nil, false, warnings, infos)
}

// writeLaggedMatrix writes a range answer; with cutoff, points after a
// series' cutoff are dropped or, with fill, repeat the last earlier point.
func writeLaggedMatrix(w http.ResponseWriter, ss []fakeSeries, start, end time.Time, step time.Duration,
	cutoff func(labels map[string]string) time.Time, fill bool, warnings, infos []string) {
	res := []map[string]any{}
	for _, s := range ss {
		var vals [][]any
		var last []any
		for t, i := start, 0; !t.After(end) && step > 0; t, i = t.Add(step), i+1 {
			v := s.at(t)
			if s.seq != nil {
				v = s.seq[i%len(s.seq)]
			}
			if t.Before(s.born) {
				continue
			}
			if cutoff != nil && t.After(cutoff(s.labels)) {
				if fill && last != nil {
					vals = append(vals, []any{promTime(t), last[1]})
				}
				continue
			}
			last = []any{promTime(t), promValue(v)}
			vals = append(vals, last)
		}
		if len(vals) > 0 {
			res = append(res, map[string]any{"metric": s.labels, "values": vals})
		}
	}
	writeSuccess(w, "matrix", res, warnings, infos)
}

func writeSuccess(w http.ResponseWriter, typ string, res any, warnings, infos []string) {
	body := map[string]any{"status": "success", "data": map[string]any{"resultType": typ, "result": res}}
	if len(warnings) > 0 {
		body["warnings"] = warnings
	}
	if len(infos) > 0 {
		body["infos"] = infos
	}
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(err) // test helper: the encoder only fails on unencodable values
	}
}

// recorder is a concurrency-safe sink with lookups.
type recorder struct{ telemetrytest.Collector }

// find returns the observations of a kind, endpoint and signal ("" = any).
func (r *recorder) find(kind telemetry.Kind, endpoint string, sig telemetry.Signal) []telemetry.Observation {
	var out []telemetry.Observation
	for _, o := range r.All() {
		if o.Kind == kind && (endpoint == "" || o.Endpoint == endpoint) && (sig == "" || o.Signal == sig) {
			out = append(out, o)
		}
	}
	return out
}

// status returns the last source status.
func (r *recorder) status(t *testing.T) telemetry.SourceStatus {
	t.Helper()
	st := r.find(telemetry.KindSource, "", "")
	if len(st) == 0 {
		t.Fatal("no source status emitted")
	}
	return *st[len(st)-1].Status
}
