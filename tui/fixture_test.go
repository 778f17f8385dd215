package tui

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// t0 is the fixture's start; tests look at it from tNow, 5 minutes later.
var (
	t0   = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tNow = t0.Add(5 * time.Minute)
)

const (
	probeSrc  = "probe:http://gpu-a:8000"
	scrapeSrc = "scrape:http://gpu-a:8000/metrics"
)

func fixedClock() time.Time { return tNow }

// wave is a deterministic wobble in [-1, 1] (no rand: goldens must not
// change between runs).
func wave(i int, period float64) float64 { return math.Sin(float64(i) * 2 * math.Pi / period) }

type script struct{ s *telemetry.Store }

func (sc script) endpoint(name, model string, engine telemetry.Engine) {
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: t0,
		Info: &telemetry.Endpoint{Name: name, Model: model, Engine: engine, BaseURL: "http://" + name + ":8000"}})
}

func (sc script) sample(ep string, sig telemetry.Signal, v float64, at time.Time, src string, iv time.Duration) {
	// MBU from a scrape without the engine's bytes counter is the
	// estimate, marked approximate as the scraper marks it.
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: ep, Signal: sig, Value: v, At: at,
		Source: src, Interval: iv, Approx: sig == telemetry.MBU})
}

// probes feeds one probe a second over [from, to): TTFT/TPOT/ITL/E2E in
// seconds, tok/s, success, and a probe record every 10 s.
func (sc script) probes(ep string, from, to time.Time, ttft, tpot float64) {
	for i, at := 0, from; at.Before(to); i, at = i+1, at.Add(time.Second) {
		tt := ttft * (1 + 0.2*wave(i, 37))
		tp := tpot * (1 + 0.1*wave(i, 23))
		sc.sample(ep, telemetry.TTFT, tt, at, probeSrc, time.Second)
		sc.sample(ep, telemetry.TPOT, tp, at, probeSrc, time.Second)
		sc.sample(ep, telemetry.ITL, tp*(1+0.3*wave(i, 7)), at, probeSrc, time.Second)
		sc.sample(ep, telemetry.E2E, tt+tp*127, at, probeSrc, time.Second)
		sc.sample(ep, telemetry.OutputTPS, 1/tp, at, probeSrc, time.Second)
		sc.sample(ep, telemetry.ProbeSuccess, 1, at, probeSrc, time.Second)
		if i%10 == 0 {
			sc.s.Observe(telemetry.Observation{Kind: telemetry.KindProbe, Endpoint: ep, At: at, Source: probeSrc,
				Probe: &telemetry.ProbeRecord{OK: true, Status: 200, TTFTms: tt * 1000, TPOTms: tp * 1000,
					E2Ems: (tt + tp*127) * 1000, OutputTokens: 128, TokensSource: "usage",
					TokensPerEvent: []int{1, 1, 1, 2, 1, 1, 3, 1}}})
		}
	}
}

// gauges feeds scrape gauges every 5 s.
func (sc script) gauges(ep string, from, to time.Time, kv, dram, mbu float64) {
	for i, at := 0, from; at.Before(to); i, at = i+1, at.Add(5*time.Second) {
		sc.sample(ep, telemetry.Running, float64(8+i%5), at, scrapeSrc, 5*time.Second)
		sc.sample(ep, telemetry.Waiting, float64(i%3), at, scrapeSrc, 5*time.Second)
		sc.sample(ep, telemetry.KVCache, kv+0.05*wave(i, 11), at, scrapeSrc, 5*time.Second)
		sc.sample(ep, telemetry.GPUMemBW, dram+0.05*wave(i, 13), at, "dcgm:http://gpu-a:9400/metrics", 5*time.Second)
		sc.sample(ep, telemetry.MBU, mbu+0.03*wave(i, 17), at, "scrape:http://gpu-a:8000/metrics", 5*time.Second)
		sc.sample(ep, "gpu_fb_used_mib", 61000+500*wave(i, 19), at, "dcgm:http://gpu-a:9400/metrics", 5*time.Second)
	}
}

// fixtureStore scripts one endpoint per display state.
func fixtureStore() *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	start := t0
	// Healthy.
	sc.endpoint("llama-8b", "meta-llama/Llama-3.1-8B-Instruct", telemetry.EngineVLLM)
	sc.probes("llama-8b", start, tNow, 0.045, 0.012)
	sc.gauges("llama-8b", start, tNow, 0.41, 0.62, 0.48)
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindLiveText, Endpoint: "llama-8b", At: tNow.Add(-time.Second),
		Live: &telemetry.LiveText{Text: "The quick brown fox jumps over the lazy dog.\nStreaming tokens \x1b[31mred?\x1b[0m stay inert.",
			Tokens: 18, TPS: 83.4, Done: true}})
	// Its engine's figures from PromQL, over a series 2 m old: rates over
	// the 5 m rate() window, so the counters' rates read low ("+"), the
	// ratio does not.
	for sig, v := range map[telemetry.Signal]float64{telemetry.RequestRate: 1.41, telemetry.PrefixCacheHit: 0.375, telemetry.OutputTPS: 288} {
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "llama-8b", Signal: sig, Value: v, At: tNow.Add(-5 * time.Second),
			Source: "promql:http://prom:9090", Interval: 15 * time.Second, RateWindow: 5 * time.Minute, SeriesAge: 2 * time.Minute})
	}
	// Breaching TTFT for the last 2 minutes.
	sc.endpoint("qwen-72b", "Qwen/Qwen2.5-72B-Instruct", telemetry.EngineSGLang)
	sc.probes("qwen-72b", start, tNow.Add(-2*time.Minute), 0.180, 0.031)
	sc.probes("qwen-72b", tNow.Add(-2*time.Minute), tNow, 0.820, 0.034)
	sc.gauges("qwen-72b", start, tNow, 0.87, 0.81, 0.66)
	// Pending: slightly over.
	sc.endpoint("deepseek-r1", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", telemetry.EngineVLLM)
	sc.probes("deepseek-r1", start, tNow, 0.260, 0.022)
	// Stale: nothing for 2 minutes.
	sc.endpoint("mistral-7b", "mistralai/Mistral-7B-Instruct-v0.3", telemetry.EngineTGI)
	sc.probes("mistral-7b", start, tNow.Add(-2*time.Minute), 0.090, 0.015)
	// Failing: the probe errors now.
	sc.endpoint("gemma-9b", "google/gemma-2-9b-it", telemetry.EngineLlamaCpp)
	sc.probes("gemma-9b", start, tNow.Add(-30*time.Second), 0.070, 0.019)
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindFailure, Endpoint: "gemma-9b", At: tNow.Add(-time.Second),
		Source: probeSrc, Err: "connect: connection refused"})
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindProbe, Endpoint: "gemma-9b", At: tNow.Add(-time.Second),
		Source: probeSrc, Probe: &telemetry.ProbeRecord{OK: false, ErrorKind: "connect", Error: "connection refused"}})
	// No data: the source answers with nothing.
	sc.endpoint("phi-3", "microsoft/Phi-3-mini-4k-instruct", telemetry.EngineOllama)
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT, telemetry.OutputTPS} {
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindNoData, Endpoint: "phi-3", Signal: sig,
			At: tNow.Add(-time.Second), Source: probeSrc, Interval: time.Second})
	}
	// Announced only: every figure unknown.
	sc.endpoint("new-endpoint", "", telemetry.EngineUnknown)
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: probeSrc, At: tNow,
		Status: &telemetry.SourceStatus{Name: "probe", Kind: "probe", State: telemetry.Live, LastOK: tNow, Latency: 42 * time.Millisecond}})
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: scrapeSrc, At: tNow,
		Status: &telemetry.SourceStatus{Name: "scrape gpu-b", Kind: "scrape", State: telemetry.Error,
			Err: "connect: connection refused", Failures: 3, LastOK: tNow.Add(-40 * time.Second)}})
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: "dcgm", At: tNow,
		Status: &telemetry.SourceStatus{Name: "dcgm", Kind: "dcgm", State: telemetry.Stale, LastOK: tNow.Add(-25 * time.Second)}})
	return sc.s
}

// fakeAlerts is a scripted SLO engine.
type fakeAlerts struct {
	list   []slo.Alert
	badges map[string]slo.Badge
}

func (f *fakeAlerts) Alerts() []slo.Alert { return f.list }

// Current lists the scripted alerts (a real engine lists every objective
// on every endpoint, inactive ones included).
func (f *fakeAlerts) Current() []slo.Alert { return f.list }

func (f *fakeAlerts) Badge(ep string, _ time.Time) slo.Badge {
	if b, ok := f.badges[ep]; ok {
		return b
	}
	return slo.BadgeNone
}

func fixtureAlerts() *fakeAlerts {
	obj := func(ep string) string { return "ttft-p95-" + ep }
	return &fakeAlerts{
		list: []slo.Alert{
			{Objective: obj("qwen-72b"), Endpoint: "qwen-72b", Kind: slo.Percentile, Signal: telemetry.TTFT,
				State: slo.Firing, ActiveAt: tNow.Add(-110 * time.Second), FiredAt: tNow.Add(-50 * time.Second),
				Value: 0.93, Threshold: 0.5, Peak: 0.98},
			{Objective: obj("deepseek-r1"), Endpoint: "deepseek-r1", Kind: slo.Percentile, Signal: telemetry.TTFT,
				State: slo.Pending, ActiveAt: tNow.Add(-20 * time.Second), Value: 0.31, Threshold: 0.3},
			{Objective: "errors-gemma-9b", Endpoint: "gemma-9b", Kind: slo.ErrorRate, Signal: telemetry.ErrorRate,
				State: slo.Firing, ActiveAt: tNow.Add(-25 * time.Second), FiredAt: tNow.Add(-15 * time.Second),
				UnknownSince: tNow.Add(-time.Second), Value: 0.1, Threshold: 0.01, Data: telemetry.Error},
			{Objective: obj("llama-8b"), Endpoint: "llama-8b", Kind: slo.Percentile, Signal: telemetry.TTFT,
				State: slo.Resolved, ActiveAt: tNow.Add(-4 * time.Minute), ResolvedAt: tNow.Add(-3 * time.Minute),
				Value: 0.05, Threshold: 0.5},
			{Objective: obj("llama-8b"), Endpoint: "llama-8b", Kind: slo.Percentile, Signal: telemetry.TPOT,
				State: slo.Inactive, Value: 0.012, Threshold: 0.05},
		},
		badges: map[string]slo.Badge{
			"llama-8b": slo.BadgeOK, "qwen-72b": slo.BadgeBreach, "deepseek-r1": slo.BadgePending,
			"mistral-7b": slo.BadgeStale, "gemma-9b": slo.BadgeError, "phi-3": slo.BadgeNoData,
		},
	}
}

// bigStore has n healthy-ish endpoints, for benchmarks.
func bigStore(n int) *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	for e := 0; e < n; e++ {
		name := fmt.Sprintf("ep-%03d", e)
		sc.endpoint(name, "model-"+name, telemetry.EngineVLLM)
		for i, at := 0, tNow.Add(-5*time.Minute); at.Before(tNow); i, at = i+1, at.Add(5*time.Second) {
			sc.sample(name, telemetry.TTFT, 0.05+0.01*wave(i+e, 17), at, probeSrc, 5*time.Second)
			sc.sample(name, telemetry.TPOT, 0.012+0.002*wave(i+e, 13), at, probeSrc, 5*time.Second)
			sc.sample(name, telemetry.OutputTPS, 80+wave(i, 7), at, probeSrc, 5*time.Second)
			sc.sample(name, telemetry.Running, 8, at, scrapeSrc, 5*time.Second)
			sc.sample(name, telemetry.KVCache, 0.4, at, scrapeSrc, 5*time.Second)
			sc.sample(name, telemetry.MBU, 0.5, at, scrapeSrc, 5*time.Second)
		}
	}
	return sc.s
}

// fleetModels are long, similar model names, as one server serves them.
var fleetModels = []string{
	"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct-FP8",
	"meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct-FP8",
	"Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B-Instruct-AWQ",
}

// fleetServers: two servers with the six models each, a third with one.
var fleetServers = []string{"gpu-a.prod:8000", "gpu-b.prod:8000", "gpu-c.prod:8000"}

// fleetStore scripts 13 endpoints that share servers and differ only in
// their names' middles and tails, for the goldens at every size: rows and
// alerts must stay apart at 80×24.
func fleetStore() *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	for si, srv := range fleetServers {
		models := fleetModels
		if si == 2 {
			models = []string{"meta-llama/Llama-3.2-3B-Instruct"}
		}
		for mi, model := range models {
			name := srv + "/" + model
			sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: t0,
				Info: &telemetry.Endpoint{Name: name, Model: model, Engine: telemetry.EngineVLLM, BaseURL: "http://" + srv}})
			ttft := 0.030 + 0.012*float64(mi) + 0.004*float64(si)
			tpot := 0.007 + 0.003*float64(mi%4)
			if si == 1 && mi == 5 {
				// The AWQ model on gpu-b breaches its TTFT objective for the
				// last 2 minutes.
				sc.probes(name, t0, tNow.Add(-2*time.Minute), ttft, tpot)
				sc.probes(name, tNow.Add(-2*time.Minute), tNow, 0.9, tpot)
			} else {
				sc.probes(name, t0, tNow, ttft, tpot)
			}
			sc.gauges(name, t0, tNow, 0.3+0.05*float64(mi), 0.5+0.04*float64(mi), 0.45)
		}
	}
	return sc.s
}

// fleetAlerts fire on similar names: a percentile objective and the page
// and ticket alerts of a burn-rate objective on the same endpoint, a
// pending one on the same model on the other server, a resolved one.
func fleetAlerts() *fakeAlerts {
	awqB := fleetServers[1] + "/Qwen/Qwen2.5-14B-Instruct-AWQ"
	awqA := fleetServers[0] + "/Qwen/Qwen2.5-14B-Instruct-AWQ"
	fp8A := fleetServers[0] + "/meta-llama/Llama-3.1-70B-Instruct-FP8"
	spent, left := -0.4, 0.62
	burn := func(long, short float64, f float64, lw, sw time.Duration) []slo.BurnRate {
		return []slo.BurnRate{{Window: lw, Rate: long, Factor: f}, {Window: sw, Rate: short, Factor: f}}
	}
	return &fakeAlerts{
		list: []slo.Alert{
			{Objective: "ttft-p95", Endpoint: awqB, Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Firing,
				ActiveAt: tNow.Add(-110 * time.Second), FiredAt: tNow.Add(-50 * time.Second), Value: 0.93, Threshold: 0.5, Peak: 0.98},
			{Objective: "ttft-ratio-99", Severity: "page", Endpoint: awqB, Kind: slo.Ratio, Signal: telemetry.TTFT, State: slo.Firing,
				ActiveAt: tNow.Add(-100 * time.Second), Value: 30, Threshold: 14.4, BudgetRemaining: &spent,
				BurnRates: burn(30, 42, 14.4, time.Hour, 5*time.Minute)},
			{Objective: "ttft-ratio-99", Severity: "ticket", Endpoint: awqB, Kind: slo.Ratio, Signal: telemetry.TTFT, State: slo.Firing,
				ActiveAt: tNow.Add(-100 * time.Second), Value: 3.1, Threshold: 1, BudgetRemaining: &spent,
				BurnRates: burn(3.1, 30, 1, 6*time.Hour, 30*time.Minute)},
			{Objective: "ttft-p95", Endpoint: awqA, Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Pending,
				ActiveAt: tNow.Add(-20 * time.Second), Value: 0.52, Threshold: 0.5},
			{Objective: "tpot-ratio-99", Severity: "ticket", Endpoint: fp8A, Kind: slo.Ratio, Signal: telemetry.TPOT, State: slo.Resolved,
				ActiveAt: tNow.Add(-4 * time.Minute), ResolvedAt: tNow.Add(-3 * time.Minute), Value: 1.8, Threshold: 1, BudgetRemaining: &left,
				BurnRates: burn(1.8, 0.4, 1, 6*time.Hour, 30*time.Minute)},
		},
		badges: map[string]slo.Badge{awqB: slo.BadgeBreach, awqA: slo.BadgePending},
	}
}

// promSrc is the PromQL source of promFleetStore.
const promSrc = "promql:http://prom:9090"

// promFleetDescription is what a PromQL source says of itself, backfilled
// history and live figures included (sources/promql describe).
const promFleetDescription = "5 endpoints (2 models, 4 replicas by pod, instance); 16 queries this refresh; rate window 5m, histogram step 15s; " +
	"history backfilled from 11:00:00 every 15s; live every 15s since 11:58:00"

// promGroup is one model row of promFleetStore: its group (namespace,
// cluster), model and replicas (Prometheus instances).
type promGroup struct {
	group, model string
	replicas     []string
	ttft, tpot   float64
	kv           bool // the engine exports its KV-cache usage
	// approx: its latency figures are estimates ("~", as a quantile the
	// source could only bracket is marked): the widest pairs.
	approx bool
}

// promGroups: PromQL mode with group_by [namespace, cluster] over three
// simulators; one model on two replicas, the others on one each, and
// the same model in both clusters.
var promGroups = []promGroup{
	{"prod/a", "meta-llama/Llama-3.1-8B-Instruct", []string{"10.0.0.1:8000", "10.0.0.2:8000"}, 0.0317, 0.0081, true, true},
	{"prod/b", "meta-llama/Llama-3.1-8B-Instruct", []string{"10.0.1.1:8000"}, 0.0420, 0.0093, true, false},
	{"prod/a", "Qwen/Qwen2.5-14B-Instruct", []string{"10.0.0.3:8000"}, 0.0655, 0.0142, false, true},
	{"prod/b", "meta-llama/Llama-3.1-70B-Instruct", []string{"10.0.1.2:8000"}, 0.1210, 0.0288, true, false},
}

// promLatencyBounds are vLLM's TTFT/TPOT bucket bounds (seconds).
var promLatencyBounds = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5}

// promWindow is one histogram window of n requests spread around v:
// cumulative buckets and their sum.
func promWindow(v float64, n int, i int) ([]telemetry.Bucket, float64) {
	b := make([]telemetry.Bucket, 0, len(promLatencyBounds)+1)
	sum := 0.0
	vals := make([]float64, n)
	for k := range vals {
		vals[k] = v * (1 + 0.25*wave(i*n+k, 13))
		sum += vals[k]
	}
	for _, ub := range append(slices.Clone(promLatencyBounds), math.Inf(1)) {
		c := 0
		for _, x := range vals {
			if x <= ub {
				c++
			}
		}
		b = append(b, telemetry.Bucket{UpperBound: ub, Count: float64(c)})
	}
	return b, sum
}

// promFleetStore scripts what the PromQL source emits for promGroups:
// each model row (an aggregate naming its replicas) and each replica,
// server-side histograms and gauges only, no probe.
func promFleetStore() *telemetry.Store {
	sc := script{telemetry.NewStore(telemetry.StoreConfig{})}
	const step = 15 * time.Second
	for _, g := range promGroups {
		agg := g.group + "/" + g.model
		sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: agg, At: t0,
			Info: &telemetry.Endpoint{Name: agg, Model: g.model, Engine: telemetry.EngineVLLM, Aggregate: true}})
		names := []string{agg}
		for _, rep := range g.replicas {
			name := g.group + "/" + rep + "/" + g.model
			sc.s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: t0,
				Info: &telemetry.Endpoint{Name: name, Model: g.model, Engine: telemetry.EngineVLLM, Group: agg, Replica: rep}})
			names = append(names, name)
		}
		for i, at := 0, t0.Add(step); !at.After(tNow); i, at = i+1, at.Add(step) {
			for _, ep := range names {
				for sig, v := range map[telemetry.Signal]float64{telemetry.TTFT: g.ttft, telemetry.TPOT: g.tpot} {
					b, sum := promWindow(v, 20, i)
					sc.s.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, Endpoint: ep, Signal: sig, At: at,
						Source: promSrc, Interval: step, Value: sum, Buckets: b, Approx: g.approx})
				}
				sc.sample(ep, telemetry.Running, float64(4+i%3), at, promSrc, step)
				sc.sample(ep, telemetry.Waiting, float64(i%2), at, promSrc, step)
				sc.sample(ep, telemetry.OutputTPS, 0.9/g.tpot, at, promSrc, step)
				if g.kv {
					sc.sample(ep, telemetry.KVCache, 0.35+0.05*wave(i, 7), at, promSrc, step)
				} else {
					sc.s.Observe(telemetry.Observation{Kind: telemetry.KindNoData, Endpoint: ep, Signal: telemetry.KVCache,
						At: at, Source: promSrc, Interval: step})
				}
			}
		}
	}
	sc.s.Observe(telemetry.Observation{Kind: telemetry.KindSource, Source: promSrc, At: tNow,
		Status: &telemetry.SourceStatus{Name: "promql", Kind: "promql", URL: "http://prom:9090", State: telemetry.Live,
			LastOK: tNow, Latency: 12 * time.Millisecond, Description: promFleetDescription}})
	return sc.s
}

// promFleetDownStore is promFleetStore with replica 10.0.0.2:8000 of
// prod/a's 8B model down since a minute before tNow, as the PromQL source
// says it: the replica's target label and up 0, the model row's replicas
// down label and share up.
func promFleetDownStore() *telemetry.Store {
	s := promFleetStore()
	agg := "prod/a/meta-llama/Llama-3.1-8B-Instruct"
	rep := "prod/a/10.0.0.2:8000/meta-llama/Llama-3.1-8B-Instruct"
	down := telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetDown, Since: tNow.Add(-time.Minute),
		Reason: `scrape failed: Get "http://10.0.0.2:8000/metrics": dial tcp 10.0.0.2:8000: connect: connection refused`})
	s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: rep, At: tNow, Source: promSrc,
		Info: &telemetry.Endpoint{Name: rep, Labels: map[string]string{telemetry.LabelTarget: down}}})
	s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: agg, At: tNow, Source: promSrc,
		Info: &telemetry.Endpoint{Name: agg, Labels: map[string]string{telemetry.LabelReplicasDown: "1 of 2 replicas down"}}})
	return s
}
