//go:build integration

package promql

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// TestIntegrationGPUPerHost runs two simulators with different load on
// two loopback hosts, 127.0.0.1 and 127.0.0.2, each with its own DCGM
// endpoint, and a third host's DCGM with no engine: every replica gets its
// own host's GPU figure (the mean over that host's GPUs, as Prometheus
// holds it), the model's aggregate the mean over both hosts' GPUs, and the
// unjoined host is a status warning, never averaged in.
func TestIntegrationGPUPerHost(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	// The two stores' subtests run in parallel: the simulators live until
	// both are done, not until this function returns.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hosts := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	var sims []*sim.Server
	var targets []promtest.Target
	for i, h := range hosts {
		srv, err := sim.New(sim.Config{Listen: h + ":0", DCGMListen: h + ":0", Load: []int{1, 6, 2}[i], Seed: int64(20 + i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(ctx); err != nil {
			t.Skipf("loopback host %s: %v", h, err)
		}
		t.Cleanup(func() {
			if err := srv.Close(); err != nil {
				t.Errorf("closing the simulator: %v", err)
			}
		})
		sims = append(sims, srv)
		targets = append(targets, promtest.Target{Job: "dcgm-" + h, URL: srv.DCGMURL() + "/metrics"})
		if i < 2 { // the third host runs no engine Prometheus scrapes
			targets = append(targets, promtest.Target{Job: "vllm-" + h, URL: srv.URL() + "/metrics"})
		}
	}
	t.Run("prometheus", func(t *testing.T) {
		t.Parallel()
		checkGPUPerHost(ctx, t, promtest.Start(t, targets...), false, sims, hosts)
	})
	t.Run("victoria-metrics", func(t *testing.T) {
		t.Parallel()
		if promtest.VictoriaMetricsBinary() == "" {
			t.Skip("victoria-metrics binary not found: " + promtest.VictoriaMetricsInstallHint)
		}
		// Scraping itself, with its default 30s -search.latencyOffset.
		checkGPUPerHost(ctx, t, promtest.StartVictoriaMetrics(t, targets...), true, sims, hosts)
	})
}

// victoriaTol is how near VictoriaMetrics' own answer the figures must
// be. Its answer for a time changes as samples arrive behind its 30 s
// latency offset, so asked later than ttftop asked it can differ (seen
// 12 % on a busy machine); the exact join is checked on Prometheus, and
// here that it works: per-host values that differ, the warning for the
// unjoined host, and sums that are not means (÷3).
const victoriaTol = 0.2

// checkGPUPerHost reads the two hosts' simulators through one store.
func checkGPUPerHost(ctx context.Context, t *testing.T, prom *promtest.Server, victoria bool, sims []*sim.Server, hosts []string) {
	prom.WaitTargetsUp(t, 30*time.Second)
	models := sims[0].Models()
	prom.WaitForSeries(t, "vllm:num_requests_running", 2*len(models), 90*time.Second)
	prom.WaitForSeries(t, "DCGM_FI_PROF_DRAM_ACTIVE", len(sims[0].GPUs())+len(sims[1].GPUs())+len(sims[2].GPUs()), 90*time.Second)

	rec := &recorder{}
	store := telemetry.NewStore(telemetry.DefaultStoreConfig())
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}, telemetry.Tee{store, rec})
	if err != nil {
		t.Fatal(err)
	}
	// Enough history for a full backfill of histogram windows.
	prom.WaitForSeries(t, "count_over_time(vllm:num_requests_running[15s]) >= 14", 2*len(models), 90*time.Second)
	for range 2 { // the second refresh knows the store holds DCGM series
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
	}
	// The store is asked at the figures' times and up to matchSpan after:
	// only once it holds every DCGM sample up to then, so that no answer
	// misses a scrape still landing (the store's "now" is not settled).
	var newest time.Time
	for _, o := range rec.All() {
		if o.Kind == telemetry.KindSample && (o.Signal == telemetry.GPUMemBW || o.Signal == telemetry.GPUPower) {
			newest = maxTime(newest, o.At)
		}
	}
	for _, series := range []string{"DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"} {
		prom.WaitHolds(t, series, newest.Add(matchSpan), 90*time.Second)
	}
	// The store's mean over a host's GPUs at the figure's evaluation time.
	// VictoriaMetrics dates answers to the whole second: within a second of
	// it (the figures change at every scrape, so a match is no accident).
	matches := func(selector string, got float64, at time.Time) (bool, float64) {
		// VictoriaMetrics answers from data ~30 s old and its instant
		// answers around one time were seen 0.8 % apart: within 2 % there
		// (hosts differ by more), exact on Prometheus.
		tol := 1e-9
		if victoria {
			tol = victoriaTol
		}
		return matchesAt(t, prom, victoria, `avg(DCGM_FI_PROF_DRAM_ACTIVE{instance=~"`+selector+`"} <= 1)`, got, at, tol)
	}
	values := map[string]float64{}
	for _, m := range models {
		for i, srv := range sims[:2] {
			name := strings.TrimPrefix(srv.URL(), "http://") + "/" + m.Name
			bw := lastOf(rec.find(telemetry.KindSample, name, telemetry.GPUMemBW))
			if len(bw) != 1 {
				t.Fatalf("%s: no GPU bandwidth", name)
			}
			if ok, want := matches(regexpQuote(hosts[i])+":.*", bw[0].Value, bw[0].At); !ok {
				t.Errorf("%s: GPU bandwidth %v, host %s's GPUs %v", name, bw[0].Value, hosts[i], want)
			}
			values[name] = bw[0].Value
		}
		agg := lastOf(rec.find(telemetry.KindSample, m.Name, telemetry.GPUMemBW))
		if len(agg) != 1 {
			t.Fatalf("%s aggregate: %+v", m.Name, agg)
		}
		if ok, both := matches(`127[.]0[.]0[.][12]:.*`, agg[0].Value, agg[0].At); !ok {
			t.Errorf("%s aggregate: %v, both hosts' GPUs %v", m.Name, agg[0].Value, both)
		}
	}
	t.Logf("GPU DRAM active per replica: %v", values)
	checkAggregates(t, rec, models[0].Name, []string{
		strings.TrimPrefix(sims[0].URL(), "http://") + "/" + models[0].Name,
		strings.TrimPrefix(sims[1].URL(), "http://") + "/" + models[0].Name,
	})
	a := values[strings.TrimPrefix(sims[0].URL(), "http://")+"/"+models[0].Name]
	b := values[strings.TrimPrefix(sims[1].URL(), "http://")+"/"+models[0].Name]
	if a == b {
		t.Errorf("both hosts' replicas show %v: a fleet average?", a)
	}
	st := rec.status(t)
	found := false
	for _, w := range st.Warnings {
		found = found || strings.Contains(w, "host 127.0.0.3") && strings.Contains(w, "share no pod or host") && !strings.Contains(w, "host 127.0.0.1") && !strings.Contains(w, "host 127.0.0.2")
	}
	if !found {
		t.Errorf("no warning about 127.0.0.3's unjoined GPUs: %v", st.Warnings)
	}
	checkGPUPower(t, prom, victoria, rec, store, sims, hosts)
}

// matchSpan is how far either side of a figure's time matchesAt asks the
// store, in steps of matchStep.
const matchSpan, matchStep = 3 * time.Second, 100 * time.Millisecond

// matchesAt reports whether the instant query q, evaluated at the
// figure's evaluation time, answers got within tol (relative, absolute
// below 1), trying times up to 3 s around it (the figures change at
// every scrape, so a match is no accident).
func matchesAt(t *testing.T, prom *promtest.Server, victoria bool, q string, got float64, at time.Time, tol float64) (bool, float64) {
	t.Helper()
	// Prometheus too: the figure's local time is the server's evaluation
	// time shifted by the estimated clock offset, which can put it on the
	// other side of a scrape (seen once under load: 0.647 vs 0.636).
	// Under load the offset estimate was seen off by more than a second:
	// up to 3 s either way, nearest first (an exact match at another time
	// is still the same host's data: the window then held the same
	// samples).
	//
	// A scrape Prometheus had started but not committed when the figure's
	// query ran is dated before the evaluation yet was not read: a rate
	// over the 10s window then covers the scrapes that one over 9s, just
	// before that scrape, covers.
	_ = victoria
	queries := []string{q}
	if short := strings.ReplaceAll(q, "[10s]", "[9s]"); short != q {
		queries = append(queries, short)
	}
	var seen float64
	for k, q := range queries {
		for i := 0; i <= 2*int(matchSpan/matchStep); i++ {
			d := time.Duration((i+1)/2) * matchStep
			if i%2 == 1 {
				d = -d
			}
			ss := prom.Query(t, q, at.Add(d))
			if len(ss) == 1 {
				if i == 0 && k == 0 {
					seen = ss[0].Value
				}
				if math.Abs(got-ss[0].Value) <= tol*math.Max(1, math.Abs(ss[0].Value)) {
					if k > 0 {
						t.Logf("%s matched over 9s: the figure's query ran during a scrape", q)
					}
					return true, ss[0].Value
				}
			}
		}
	}
	return false, seen
}

// checkGPUPower checks GPU power: each replica carries its own host's
// GPUs' summed power (the energy counter's rate over the 10s window, as
// Prometheus holds it, and near the draw the simulator's DCGM page shows),
// the model row the sum over both hosts, never a mean; and the store
// derives energy per token for every endpoint from it.
func checkGPUPower(t *testing.T, prom *promtest.Server, victoria bool, rec *recorder, store *telemetry.Store, sims []*sim.Server, hosts []string) {
	t.Helper()
	energy := func(sel string) string {
		return `sum(rate(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{instance=~"` + sel + `"}[10s])) / 1000`
	}
	// The simulator's own page now: draw and limit summed over the host.
	page := make([]struct{ power, limit float64 }, 2)
	for i, srv := range sims[:2] {
		page[i].power = pageSum(t, srv.DCGMURL()+"/metrics", "DCGM_FI_DEV_POWER_USAGE")
		page[i].limit = pageSum(t, srv.DCGMURL()+"/metrics", "DCGM_FI_DEV_POWER_MGMT_LIMIT")
	}
	// VictoriaMetrics' instant answers around one time differ by up to
	// 0.8 % (seen): within 2 % there, exact on Prometheus, as for DRAM.
	tol := 1e-9
	if victoria {
		tol = victoriaTol
	}
	now := time.Now()
	ept := func(name string) float64 {
		// Over several chart slots: a PromQL track's are as wide as its
		// live interval (35s with VictoriaMetrics' latency offset).
		got, ok := store.Signal(name, telemetry.EnergyPerToken, now, 5*time.Minute)
		if !ok || got.Value == nil || math.IsNaN(*got.Value) || *got.Value <= 0 {
			t.Errorf("%s: no energy per token in the store: %+v", name, got)
			return math.NaN()
		}
		return *got.Value
	}
	for _, m := range sims[0].Models() {
		var sum float64
		for i, srv := range sims[:2] {
			name := strings.TrimPrefix(srv.URL(), "http://") + "/" + m.Name
			p := lastOf(rec.find(telemetry.KindSample, name, telemetry.GPUPower))
			if len(p) != 1 {
				t.Fatalf("%s: no GPU power", name)
			}
			if ok, want := matchesAt(t, prom, victoria, energy(regexpQuote(hosts[i])+":.*"), p[0].Value, p[0].At, tol); !ok {
				t.Errorf("%s: GPU power %v W, host %s's GPUs' energy rate %v W", name, p[0].Value, hosts[i], want)
			}
			// The counter is the integral of the draw (expose_dcgm.go): its
			// mean over the 10s window ending ~1.5s ago (Delay) is near the
			// page's draw now (measured within 2 %, once 28 % on a busy machine;
			// 50 % allows the draw's swing yet catches a mean for a sum (÷3 GPUs) or a
			// unit slip (×1000)), and never above the GPUs' limit.
			// VictoriaMetrics answers 30s back (latency offset), when the
			// draw was another: there only the limit.
			rel := math.Abs(p[0].Value-page[i].power) / page[i].power
			if !victoria && rel > 0.5 || p[0].Value > page[i].limit || p[0].Value <= 0 {
				t.Errorf("%s: GPU power %v W, the DCGM page shows %v W (limit %v W)", name, p[0].Value, page[i].power, page[i].limit)
			}
			t.Logf("%s: GPU power %.1f W (DCGM page now %.1f W, limit %.0f W), %.3f J/token", name, p[0].Value, page[i].power, page[i].limit, ept(name))
			sum += p[0].Value
		}
		agg := lastOf(rec.find(telemetry.KindSample, m.Name, telemetry.GPUPower))
		if len(agg) != 1 {
			t.Fatalf("%s aggregate: no GPU power", m.Name)
		}
		if math.Abs(agg[0].Value-sum) > 1e-9*sum {
			t.Errorf("%s aggregate: GPU power %v W, its replicas sum to %v W", m.Name, agg[0].Value, sum)
		}
		if ok, both := matchesAt(t, prom, victoria, energy(`127[.]0[.]0[.][12]:.*`), agg[0].Value, agg[0].At, tol); !ok {
			t.Errorf("%s aggregate: GPU power %v W, both hosts' GPUs %v W", m.Name, agg[0].Value, both)
		}
		t.Logf("%s: GPU power %.1f W, %.3f J/token", m.Name, agg[0].Value, ept(m.Name))
	}
}

// pageSum sums a metric's samples on an exposition page.
func pageSum(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", url, line, err)
		}
		sum += v
		n++
	}
	if n == 0 {
		t.Fatalf("%s: no %s", url, name)
	}
	return sum
}

// checkAggregates checks a model's aggregate against its replicas: every
// histogram window is the sum of theirs at the same step, running requests
// the sum of theirs (one evaluation), KV cache the fullest replica's.
func checkAggregates(t *testing.T, rec *recorder, agg string, reps []string) {
	t.Helper()
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.ITL} {
		byAt := map[time.Time][]telemetry.Bucket{}
		n := map[time.Time]int{}
		for _, r := range reps {
			for _, o := range rec.find(telemetry.KindHistogram, r, sig) {
				byAt[o.At] = addBuckets(byAt[o.At], o.Buckets)
				n[o.At]++
			}
		}
		checked := 0
		for _, o := range rec.find(telemetry.KindHistogram, agg, sig) {
			if n[o.At] != len(reps) {
				continue
			}
			checked++
			if !sameBuckets(o.Buckets, byAt[o.At]) {
				t.Errorf("%s %s at %s: %v, replicas sum to %v", agg, sig, o.At, o.Buckets, byAt[o.At])
			}
		}
		if checked == 0 {
			t.Errorf("%s %s: no window the replicas share", agg, sig)
		}
	}
	one := func(ep string, sig telemetry.Signal) float64 {
		ss := lastOf(rec.find(telemetry.KindSample, ep, sig))
		if len(ss) != 1 {
			t.Fatalf("%s %s: no value", ep, sig)
		}
		return ss[0].Value
	}
	var sum, kv float64
	for _, r := range reps {
		sum += one(r, telemetry.Running)
		kv = math.Max(kv, one(r, telemetry.KVCache))
	}
	if got := one(agg, telemetry.Running); got != sum {
		t.Errorf("%s running %v, replicas sum to %v", agg, got, sum)
	}
	if got := one(agg, telemetry.KVCache); got != kv {
		t.Errorf("%s KV %v, fullest replica %v", agg, got, kv)
	}
}

// TestIntegrationGPUPerPodFromCapture joins a real dcgm-exporter capture
// from Kubernetes (GPU Operator, pod mapping on) to engine replicas by pod,
// with real Prometheus: the exporter's own target carries pod and
// namespace labels (Kubernetes service discovery), so Prometheus renames
// the capture's to exported_pod and exported_namespace. The replica in the
// GPU's pod gets the capture's value; one in another pod gets no GPU figure
// and a warning, and the aggregate only the joined GPU.
func TestIntegrationGPUPerPodFromCapture(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx := context.Background()
	const gpuPod, otherPod, capturedDRAM = "cuda-75454ffb9f-8ljq7", "cuda-75454ffb9f-zzzzz", 0.003074
	dcgm := newGrowingPage(fixtures.Read(t, "metrics", "dcgm-exporter-k8s-rtx4000ada-pod-labels.txt"))
	dsrv := httptest.NewServer(dcgm)
	defer dsrv.Close()
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	var targets []promtest.Target
	for _, pod := range []string{gpuPod, otherPod} {
		srv := httptest.NewServer(newGrowingPage(synthPage(spec, "llama")))
		defer srv.Close()
		targets = append(targets, promtest.Target{Job: "vllm-" + pod, URL: srv.URL + "/metrics",
			Labels: map[string]string{"pod": pod, "namespace": "default"}})
	}
	targets = append(targets, promtest.Target{Job: "dcgm", URL: dsrv.URL + "/metrics",
		Labels: map[string]string{"pod": "nvidia-dcgm-exporter-x7k2p", "namespace": "gpu-operator"}})
	prom := promtest.Start(t, targets...)
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, `DCGM_FI_PROF_DRAM_ACTIVE{exported_pod="`+gpuPod+`"}`, 1, 30*time.Second)
	prom.WaitForSeries(t, "vllm:num_requests_running", 2, 30*time.Second)

	rec := &recorder{}
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
	}
	for ep, want := range map[string]float64{gpuPod + "/llama": capturedDRAM, "llama": capturedDRAM} {
		bw := lastOf(rec.find(telemetry.KindSample, ep, telemetry.GPUMemBW))
		if len(bw) != 1 || math.Abs(bw[0].Value-want) > 1e-12 {
			t.Errorf("%s: GPU bandwidth %+v, want %v", ep, bw, want)
		}
	}
	if bw := rec.find(telemetry.KindSample, otherPod+"/llama", telemetry.GPUMemBW); len(bw) != 0 {
		t.Errorf("%s has no GPU series but got %+v", otherPod, bw)
	}
	if w := strings.Join(rec.status(t).Warnings, "\n"); !strings.Contains(w, "no GPU series shares a pod or host with "+otherPod+"/llama") {
		t.Errorf("warnings %q: want one naming %s", w, otherPod)
	}
}

func regexpQuote(s string) string { return strings.ReplaceAll(s, ".", "[.]") }

// TestIntegrationGPUPowerGaugeFallback: with real Prometheus, a GPU whose
// energy counter does not move (dcgm-exporter's 30s collection, or a stuck
// driver) and one without the counter both count with their sampled draw
// (DCGM_FI_DEV_POWER_USAGE), never as 0 W or left out.
func TestIntegrationGPUPowerGaugeFallback(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	ctx := context.Background()
	const page = `# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-0",Hostname="node-1"} 40.979
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-1",Hostname="node-1"} 99.5
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-0",Hostname="node-1"} 455497156
`
	// Enough scrapes for a rate of the (unchanged) counter over the window.
	prom, esrv := promOverEngineAndDCGM(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, page)
	}), "count_over_time(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION[10s]) >= 3", 1)

	rec := &recorder{}
	s, err := New(Config{URL: prom.URL, ScrapeInterval: promtest.ScrapeInterval, HistogramStep: 2 * time.Second,
		Delay: 1500 * time.Millisecond, Window: 10 * time.Second, Backfill: 10 * time.Second}, rec)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second refresh knows the store holds DCGM series
		if err := s.RefreshOnce(ctx); err != nil {
			t.Fatalf("RefreshOnce: %v", err)
		}
	}
	host := strings.TrimPrefix(esrv.URL, "http://")
	for _, ep := range []string{host + "/llama", "llama"} {
		p := lastOf(rec.find(telemetry.KindSample, ep, telemetry.GPUPower))
		if len(p) != 1 || math.Abs(p[0].Value-(40.979+99.5)) > 1e-9 {
			names := []string{}
			for _, o := range rec.find(telemetry.KindSample, "", telemetry.GPUPower) {
				names = append(names, o.Endpoint)
			}
			t.Errorf("%s: GPU power %+v, want 40.979 + 99.5 W (the draws); power on %v; warnings %v", ep, p, names, rec.status(t).Warnings)
		}
	}
}

// promOverEngineAndDCGM starts a real Prometheus scraping a growing vLLM
// page (model "llama") and the dcgm handler, and waits until ready holds
// for want series and the engine's gauge is in.
func promOverEngineAndDCGM(t *testing.T, dcgm http.Handler, ready string, want int) (*promtest.Server, *httptest.Server) {
	t.Helper()
	dsrv := httptest.NewServer(dcgm)
	t.Cleanup(dsrv.Close)
	spec, _ := engines.Lookup(telemetry.EngineVLLM)
	esrv := httptest.NewServer(newGrowingPage(synthPage(spec, "llama")))
	t.Cleanup(esrv.Close)
	prom := promtest.Start(t, promtest.Target{Job: "vllm", URL: esrv.URL + "/metrics"}, promtest.Target{Job: "dcgm", URL: dsrv.URL + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, ready, want, 60*time.Second)
	prom.WaitForSeries(t, "vllm:num_requests_running", 1, 30*time.Second)
	return prom, esrv
}
