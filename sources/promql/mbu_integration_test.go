//go:build integration

package promql

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

// mbuModels describes the simulator's models for MBU, as the demo's
// config does; withKV false leaves the KV term out.
func mbuModels(t *testing.T, specs []sim.ModelSpec, withKV bool) map[string]bandwidth.Model {
	t.Helper()
	out := map[string]bandwidth.Model{}
	for _, m := range specs {
		g, err := sim.LookupGPU(m.GPU)
		if err != nil {
			t.Fatal(err)
		}
		bm := bandwidth.Model{Parameters: m.Params, BytesPerParameter: m.DtypeBytes, TensorParallel: m.NumGPUs, GPU: g.DCGMName}
		if withKV {
			bm.KVBytesPerToken = m.KVBytesPerToken
		}
		out[m.Name] = bm
	}
	return out
}

// directMBU feeds the direct scraper (sources/scrape) two bodies
// Prometheus scraped, on a clock set to their scrape times, and returns
// the MBU it emits for model: the direct-scrape figure from the same
// counters.
func directMBU(ctx context.Context, t *testing.T, bodies []snapshot, models map[string]bandwidth.Model, model string) telemetry.Observation {
	t.Helper()
	replay := &replayTarget{}
	srv := httptest.NewServer(replay)
	defer srv.Close()
	srec := &recorder{}
	var now time.Time
	sc := scrape.New(scrape.Config{URL: srv.URL, Name: "direct", MBU: models, Now: func() time.Time { return now }}, srec)
	for _, b := range bodies {
		replay.set(b.body, b.ctype)
		now = b.at
		if err := sc.ScrapeOnce(ctx); err != nil {
			t.Fatalf("direct scrape: %v", err)
		}
	}
	got := rec1(srec.find(telemetry.KindSample, "direct/"+model, telemetry.MBU))
	if len(got) != 1 {
		t.Fatalf("direct scrape: MBU of %s %+v", model, got)
	}
	return got[0]
}

// withLine returns body with model's line of metric name taken from src
// (unchanged where either has none).
func withLine(body, src []byte, name, model string) []byte {
	match := `model_name="` + model + `"`
	pick := func(b []byte) (string, bool) {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, name+"{") && strings.Contains(l, match) {
				return l, true
			}
		}
		return "", false
	}
	from, ok1 := pick(body)
	to, ok2 := pick(src)
	if !ok1 || !ok2 {
		return body
	}
	return []byte(strings.Replace(string(body), from, to, 1))
}

// rec1 is the newest live (not History) observation of obs, if any.
func rec1(obs []telemetry.Observation) []telemetry.Observation {
	live := slices.DeleteFunc(slices.Clone(obs), func(o telemetry.Observation) bool { return o.History })
	return lastOf(live)
}

// historyOf returns the History observations of obs.
func historyOf(obs []telemetry.Observation) []telemetry.Observation {
	return slices.DeleteFunc(slices.Clone(obs), func(o telemetry.Observation) bool { return !o.History })
}

// TestIntegrationMBU: real Prometheus scrapes the simulator serving, in
// vLLM's names, a model without the bytes-read counter (org/a: MBU
// estimated) and one with it (org/b, --enable-mfu-metrics: measured), and
// a second simulator in SGLang's names (org/c: estimated, live KV tokens
// from sglang:num_used_tokens). PromQL MBU of each replica and
// model row equals what the direct scraper computes from the same
// counters, fed the bodies Prometheus scraped at the edges of the
// figure's window:
//   - estimate, weights only: the ITL window's Δsum/Δcount, exactly
//     (1e-9);
//   - estimate with the KV term (vLLM: KV usage × the capacity of
//     vllm:cache_config_info; SGLang: live tokens): exactly too, once the
//     scraper's second body carries the KV lines of the scrape PromQL read
//     them from (the evaluation, not the window's end; for SGLang's live
//     tokens, a separate instant query, the scrape at the usage's date or
//     one beside it);
//   - measured: rate(bytes[10s]) against Δbytes/Δt over the first and
//     last scrape in that window, the scraper clocked by Prometheus'
//     sample times: equal, within 5 % for rate()'s extrapolation when a
//     scrape is late.
func TestIntegrationMBU(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A vLLM simulator with both models, and an SGLang one (live KV
	// tokens from sglang:num_used_tokens, no bytes counter).
	vspecs := twoModels()
	vspecs[1].MFUMetrics = true
	sspec := twoModels()[0]
	sspec.Name = "org/c"
	targets := []*mbuTarget{
		startMBUTarget(ctx, t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 41, Models: vspecs}, "vllm:num_requests_running"),
		startMBUTarget(ctx, t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 42, Models: []sim.ModelSpec{sspec},
			MetricsFormat: sim.FormatSGLang}, "sglang:num_running_reqs"),
	}
	var specs []sim.ModelSpec
	var scrapes []promtest.Target
	for i, tg := range targets {
		specs = append(specs, tg.srv.Models()...)
		scrapes = append(scrapes, promtest.Target{Job: fmt.Sprintf("engine-%d", i), URL: tg.proxy + "/metrics"})
	}
	prom := promtest.Start(t, scrapes...)
	prom.WaitTargetsUp(t, 30*time.Second)
	for _, tg := range targets {
		prom.WaitForSeries(t, "count_over_time("+tg.running+"[15s]) >= 14", len(tg.srv.Models()), 90*time.Second)
	}

	const step = 2 * time.Second
	run := func(withKV bool, view time.Duration) (*recorder, map[string]bandwidth.Model) {
		models := mbuModels(t, specs, withKV)
		rec := &recorder{}
		s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: step,
			Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second, MBU: models}, rec)
		if err != nil {
			t.Fatal(err)
		}
		s.WindowChanged(view)
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
		if view > 0 && len(historyOf(rec.All())) == 0 {
			t.Fatalf("window of %s viewed: no history fetched", view)
		}
		return rec, models
	}
	// The last with a window viewed: the refresh backfills it, and MBU
	// still reads this refresh's live figures.
	for _, c := range []struct {
		withKV bool
		view   time.Duration
	}{{false, 0}, {true, 0}, {true, time.Minute}} {
		rec, models := run(c.withKV, c.view)
		for _, tg := range targets {
			for _, m := range tg.srv.Models() {
				checkMBU(ctx, t, prom, rec, tg, models, m, c.withKV, step)
			}
		}
	}
}

// mbuTarget is one simulator Prometheus scrapes through a recording proxy.
type mbuTarget struct {
	srv     *sim.Server
	snaps   *snapshots
	proxy   string
	running string // its running-requests gauge, to find scrapes by
}

func startMBUTarget(ctx context.Context, t *testing.T, cfg sim.Config, running string) *mbuTarget {
	t.Helper()
	srv := simtest.Start(t, cfg)
	tg := &mbuTarget{srv: srv, snaps: &snapshots{}, running: running}
	proxy := httptest.NewServer(tg.snaps.recordingProxy(t, srv.URL()+"/metrics"))
	t.Cleanup(proxy.Close)
	tg.proxy = proxy.URL
	return tg
}

// checkMBU compares one model's PromQL MBU with the direct scraper's (see
// TestIntegrationMBU).
func checkMBU(ctx context.Context, t *testing.T, prom *promtest.Server, rec *recorder, tg *mbuTarget, models map[string]bandwidth.Model,
	m sim.ModelSpec, withKV bool, step time.Duration) {
	t.Helper()
	edge := func(at time.Time) snapshot {
		return tg.snaps.nearest(t, prom.ScrapeTime(t, fmt.Sprintf("%s{model_name=%q}", tg.running, m.Name), at))
	}
	replica := strings.TrimPrefix(tg.proxy, "http://") + "/" + m.Name
	got := rec1(rec.find(telemetry.KindSample, replica, telemetry.MBU))
	agg := rec1(rec.find(telemetry.KindSample, m.Name, telemetry.MBU))
	if len(got) != 1 || len(agg) != 1 || agg[0].Value != got[0].Value || agg[0].Approx != got[0].Approx {
		t.Fatalf("%s (KV term %v): MBU replica %+v, model row %+v (want the one replica's)", m.Name, withKV, got, agg)
	}
	var bodies []snapshot
	tol := 1e-9
	switch {
	case m.MFUMetrics:
		// The rate's samples: the figure is dated by the newest sample
		// its [10s] read (valueAt), the evaluation being up to a scrape
		// interval later, so they are the ten scrapes up to that date.
		// (Not those before the refresh's start: the first refresh lists
		// names before the gauges, and a scrape in between moved the
		// window by one.)
		ts := prom.SampleTimes(t, fmt.Sprintf("vllm:estimated_read_bytes_per_gpu_total{model_name=%q}", m.Name), got[0].At,
			10*time.Second-promtest.ScrapeInterval/2)
		bodies = []snapshot{edge(ts[0]), edge(ts[len(ts)-1])}
		// The scraper is clocked by Prometheus' sample times, not by the
		// bodies' arrival at the proxy: Prometheus stamps a sample with
		// its scrape's start, and under load the body can be made a few
		// hundred ms later (seen: 0.3970 vs 0.3774 over 9 s with arrival
		// times), which would be the test's error, not the source's.
		bodies[0].at, bodies[1].at = ts[0], ts[len(ts)-1]
		// A rate: equal when rate() extrapolates to both ends of its
		// window (seen: the same to 4 places), which it stops short of
		// when a scrape is late by a tenth of the interval; so within
		// 5 %, as the every-engine test's rates. A summed rank or a unit
		// slip is 2× or more.
		tol = 0.05
	default:
		itl := rec1(rec.find(telemetry.KindHistogram, replica, telemetry.ITL))
		if len(itl) != 1 {
			t.Fatalf("%s: no ITL window", m.Name)
		}
		bodies = []snapshot{edge(itl[0].At.Add(-step)), edge(itl[0].At)}
		if withKV {
			// PromQL reads KV usage (or live tokens) at the evaluation,
			// the scraper from its second body: that body gets the KV
			// lines of the scrape the PromQL figures read. KV usage and
			// SGLang's live tokens come from two instant queries, each
			// evaluated at the store's now, so a scrape ingested between
			// them puts live tokens one scrape after (or before) the KV
			// usage's date (seen in CI: 0.6904 against 0.6947 from the
			// usage's scrape). The candidates are the scrapes around that
			// date, the usage's own first; the figure must equal the
			// direct one of one of them exactly.
			kv := rec1(rec.find(telemetry.KindSample, replica, telemetry.KVCache))
			if len(kv) != 1 {
				t.Fatalf("%s: no KV usage", m.Name)
			}
			series := fmt.Sprintf("%s{model_name=%q}", tg.running, m.Name)
			near := prom.SampleTimes(t, series, kv[0].At.Add(promtest.ScrapeInterval*3/2), 3*promtest.ScrapeInterval)
			slices.SortFunc(near, func(a, b time.Time) int {
				return cmp.Compare(a.Sub(kv[0].At).Abs(), b.Sub(kv[0].At).Abs())
			})
			var wants []telemetry.Observation
			for _, at := range near {
				b := slices.Clone(bodies)
				src := tg.snaps.nearest(t, at).body
				for _, name := range []string{"vllm:kv_cache_usage_perc", "sglang:num_used_tokens"} {
					b[1].body = withLine(b[1].body, src, name, m.Name)
				}
				w := directMBU(ctx, t, b, models, m.Name)
				wants = append(wants, w)
				if math.Abs(got[0].Value-w.Value) <= tol*w.Value {
					break
				}
			}
			compareMBU(t, m, withKV, got[0], wants[len(wants)-1], bodies, tol)
			return
		}
	}
	compareMBU(t, m, withKV, got[0], directMBU(ctx, t, bodies, models, m.Name), bodies, tol)
}

// compareMBU checks the PromQL figure got against the direct scraper's
// want, computed over bodies.
func compareMBU(t *testing.T, m sim.ModelSpec, withKV bool, got, want telemetry.Observation, bodies []snapshot, tol float64) {
	t.Helper()
	t.Logf("%s (KV term %v): PromQL MBU %.4f (approx %v), direct scrape %.4f (approx %v) over %s",
		m.Name, withKV, got.Value, got.Approx, want.Value, want.Approx, bodies[1].at.Sub(bodies[0].at).Round(time.Millisecond))
	if got.Approx != !m.MFUMetrics || want.Approx != got.Approx {
		t.Errorf("%s: approx %v, direct %v: want measured only with the bytes counter", m.Name, got.Approx, want.Approx)
	}
	if math.Abs(got.Value-want.Value) > tol*want.Value || want.Value <= 0 {
		t.Errorf("%s (KV term %v): PromQL MBU %v, direct scrape %v (tolerance %g)", m.Name, withKV, got.Value, want.Value, tol)
	}
}
