//go:build integration

package promql

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// soakEnv overrides how long TestIntegrationLaggingVictoriaMetrics watches
// the figures after they first appear (a Go duration, default 60s).
const soakEnv = "TTFTOP_LAG_SOAK"

// storeReader is one PromQL source over one store, feeding a recorder and
// the store the dashboard reads.
type storeReader struct {
	name  string
	src   *Source
	rec   *recorder
	store *telemetry.Store
}

func newStoreReader(t *testing.T, name, url string, cfg Config) *storeReader {
	t.Helper()
	cfg.URL, cfg.Name = url, name
	r := &storeReader{name: name, rec: &recorder{}, store: telemetry.NewStore(telemetry.DefaultStoreConfig())}
	s, err := New(cfg, telemetry.Tee{r.rec, r.store})
	if err != nil {
		t.Fatal(err)
	}
	r.src = s
	return r
}

// missing lists the figures the dashboard would not show as live at now,
// over window: the latency percentiles, and two gauges.
func (r *storeReader) missing(models []sim.ModelSpec, now time.Time, window time.Duration) []string {
	var out []string
	for _, m := range models {
		for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT, telemetry.ITL, telemetry.E2E, telemetry.Running, telemetry.OutputTPS} {
			v, ok := r.store.Signal(m.Name, sig, now, window)
			shown := v.P50 != nil
			if !sig.Info().Distribution {
				shown = v.Value != nil
			}
			if !ok || !shown || v.State != telemetry.Live {
				out = append(out, fmt.Sprintf("%s %s (%s)", m.Name, sig, v.State))
			}
		}
	}
	return out
}

func (r *storeReader) status(t *testing.T) telemetry.SourceStatus { return r.rec.status(t) }

var lagRE = regexp.MustCompile(`^lagging (\S+) behind`)

// TestIntegrationLaggingVictoriaMetrics reads the same samples from two
// stores: Prometheus scrapes the simulator and remote-writes every sample
// to VictoriaMetrics, which runs with its default query flags
// (-search.latencyOffset=30s: the newest 30s are invisible to queries).
// After warm-up the figures from VictoriaMetrics must stay on screen, no
// histogram window may be lost (the same windows as from Prometheus, with
// the same counts, equal to what the store holds), the status must say
// the data lags, and once the store is killed the source is in error.
func TestIntegrationLaggingVictoriaMetrics(t *testing.T) {
	t.Parallel() // each starts its own servers; most of their time is waiting for scrapes
	if promtest.Binary() == "" {
		t.Skip("prometheus binary not found: " + promtest.InstallHint)
	}
	if promtest.VictoriaMetricsBinary() == "" {
		t.Skip("victoria-metrics binary not found: " + promtest.VictoriaMetricsInstallHint)
	}
	soak := time.Minute
	if v := os.Getenv(soakEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", soakEnv, v, err)
		}
		soak = d
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	target := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Load: 4, Seed: 11})
	models := target.Models()

	vm := promtest.StartVictoriaMetrics(t)
	prom := promtest.StartRemoteWriting(t, vm.RemoteWriteURL(), promtest.Target{Job: "vllm", URL: target.URL() + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	started := time.Now()

	const step = 2 * time.Second
	cfg := Config{ScrapeInterval: promtest.ScrapeInterval, HistogramStep: step, Delay: 1500 * time.Millisecond,
		Window: 10 * time.Second, Backfill: 10 * time.Second}
	vmRead := newStoreReader(t, "victoria", vm.URL, cfg)
	promRead := newStoreReader(t, "prometheus", prom.URL, cfg)
	readers := []*storeReader{vmRead, promRead}

	// The dashboard's figures over the last minute, checked every second.
	const figureWindow = time.Minute
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var appeared, until time.Time
	var checks int
	type gap struct {
		at   time.Time
		what string
	}
	gaps := map[string][]gap{}
	for {
		for _, r := range readers {
			if err := r.src.RefreshOnce(ctx); err != nil {
				t.Fatalf("%s: refresh: %v", r.name, err)
			}
		}
		now := time.Now()
		miss := vmRead.missing(models, now, figureWindow)
		if appeared.IsZero() && len(miss) == 0 {
			appeared, until = now, now.Add(soak)
			t.Logf("figures from VictoriaMetrics (default flags) complete %s after the store started receiving", now.Sub(started).Round(100*time.Millisecond))
		}
		if !appeared.IsZero() {
			checks++
			for _, r := range readers {
				if m := r.missing(models, now, figureWindow); len(m) > 0 {
					gaps[r.name] = append(gaps[r.name], gap{now, fmt.Sprintf("+%s: %s", now.Sub(appeared).Round(time.Second), strings.Join(m, ", "))})
				}
			}
			if now.After(until) {
				break
			}
		}
		if appeared.IsZero() && now.Sub(started) > 90*time.Second {
			t.Fatalf("figures from VictoriaMetrics never complete after %s: missing %v; status %+v", now.Sub(started), miss, vmRead.status(t))
		}
		<-tick.C
	}
	t.Logf("figures checked every second for %s after warm-up: %d checks; missing from VictoriaMetrics in %d, from Prometheus in %d",
		soak, checks, len(gaps[vmRead.name]), len(gaps[promRead.name]))
	// A scrape that fails under load (its timeout is 1s) makes Prometheus
	// mark the target's series stale until the next one: those figures are
	// rightly not live for a refresh, from Prometheus at once and from
	// VictoriaMetrics (remote-written markers) its lag later.
	failed := prom.FailedScrapes(t, "vllm", time.Now(), time.Since(started)+time.Minute)
	explainedBy := map[string]time.Duration{promRead.name: 3 * time.Second, vmRead.name: 50 * time.Second}
	for name, gs := range gaps {
		var unexplained []string
		for _, g := range gs {
			if slices.ContainsFunc(failed, func(f time.Time) bool { return !f.After(g.at) && g.at.Sub(f) <= explainedBy[name] }) {
				t.Logf("%s: %s, after a failed scrape (Prometheus up=0 at %v)", name, g.what, failed)
				continue
			}
			unexplained = append(unexplained, g.what)
		}
		if len(unexplained) > 0 {
			t.Errorf("%s: figures missing in %d of %d checks after warm-up, first: %v", name, len(unexplained), checks, unexplained[:min(len(unexplained), 5)])
		}
	}

	st := vmRead.status(t)
	m := lagRE.FindStringSubmatch(st.Description)
	if st.State != telemetry.Live || m == nil || len(st.Warnings) == 0 || !strings.Contains(st.Warnings[0], "data delayed") {
		t.Errorf("VictoriaMetrics status %+v: want live, saying the data is delayed and the lag", st)
	} else if lag, err := time.ParseDuration(m[1]); err != nil || lag < 29*time.Second || lag > 45*time.Second {
		t.Errorf("learned lag %q, want about 30s (-search.latencyOffset) plus a scrape and the remote-write delay", m[1])
	} else {
		t.Logf("VictoriaMetrics status: %s", st.Description)
	}
	if st := promRead.status(t); st.State != telemetry.Live || strings.Contains(strings.Join(st.Warnings, "\n"), "data delayed") {
		t.Errorf("Prometheus status %+v: want live, not delayed", st)
	}

	t.Run("same windows and counts in both stores", func(t *testing.T) {
		checkStoresAgree(t, vmRead, promRead, vm, models, step)
	})

	t.Run("killed store is an error", func(t *testing.T) {
		for _, c := range []struct {
			r   *storeReader
			srv *promtest.Server
		}{{vmRead, vm}, {promRead, prom}} {
			c.srv.Kill(t)
			if err := c.r.src.RefreshOnce(ctx); err == nil {
				t.Errorf("%s: refresh succeeded with the store killed", c.r.name)
			}
			st := c.r.status(t)
			if st.State != telemetry.Error || !strings.Contains(st.Err, "connection refused") {
				t.Errorf("%s: status %+v, want an error saying connection refused", c.r.name, st)
			}
			v, _ := c.r.store.Signal(models[0].Name, telemetry.TTFT, time.Now(), figureWindow)
			if v.State != telemetry.Error {
				t.Errorf("%s: TTFT figure in state %s with the store killed, want error", c.r.name, v.State)
			}
		}
	})
}

// checkStoresAgree compares, per model and signal, the histogram windows
// read from VictoriaMetrics and from Prometheus over their common span (at
// most 5m): the same window ends (none lost), the same buckets, and a total
// equal to the increase VictoriaMetrics itself reports.
func checkStoresAgree(t *testing.T, vmRead, promRead *storeReader, vm *promtest.Server, models []sim.ModelSpec, step time.Duration) {
	metric := map[telemetry.Signal]string{
		telemetry.TTFT: "vllm:time_to_first_token_seconds",
		telemetry.TPOT: "vllm:request_time_per_output_token_seconds",
		telemetry.ITL:  "vllm:inter_token_latency_seconds",
		telemetry.E2E:  "vllm:e2e_request_latency_seconds",
	}
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT, telemetry.ITL, telemetry.E2E} {
		for _, md := range models {
			name := md.Name
			vmHs := vmRead.rec.find(telemetry.KindHistogram, name, sig)
			promHs := promRead.rec.find(telemetry.KindHistogram, name, sig)
			if len(vmHs) == 0 || len(promHs) == 0 {
				t.Errorf("%s %s: %d windows from VictoriaMetrics, %d from Prometheus", name, sig, len(vmHs), len(promHs))
				continue
			}
			to := vmHs[len(vmHs)-1].At
			if p := promHs[len(promHs)-1].At; p.Before(to) {
				to = p
			}
			from := vmHs[0].At.Add(-step)
			if p := promHs[0].At.Add(-step); p.After(from) {
				from = p
			}
			if to.Sub(from) > 5*time.Minute {
				from = to.Add(-5 * time.Minute)
			}
			in := func(hs []telemetry.Observation) (ends []int64, total []telemetry.Bucket) { // ends in ms
				for _, h := range hs {
					if h.At.UnixMilli()%step.Milliseconds() != 0 {
						t.Errorf("%s %s: window dated %s, not a multiple of the %s step (clock offset misjudged)", name, sig, h.At.Format(time.StampMilli), step)
					}
					if h.At.After(from) && !h.At.After(to) {
						ends = append(ends, h.At.UnixMilli())
						total = addBuckets(total, h.Buckets)
					}
				}
				return ends, total
			}
			vmEnds, vmTotal := in(vmHs)
			promEnds, promTotal := in(promHs)
			if fmt.Sprint(vmEnds) != fmt.Sprint(promEnds) {
				t.Errorf("%s %s over (%s, %s]: windows from VictoriaMetrics %v, from Prometheus %v; want the same (none lost)",
					name, sig, from.Format(time.TimeOnly), to.Format(time.TimeOnly), vmEnds, promEnds)
			}
			if !sameBuckets(vmTotal, promTotal) {
				t.Errorf("%s %s: VictoriaMetrics windows %v, Prometheus windows %v", name, sig, vmTotal, promTotal)
			}
			series := fmt.Sprintf(`sum(%s_bucket{le="+Inf", model_name=%q})`, metric[sig], name)
			held := only(t, vm.Query(t, series, to)) - only(t, vm.Query(t, series, from))
			got := vmTotal[len(vmTotal)-1].Count
			if got != held {
				t.Errorf("%s %s: %.0f observations in the windows, VictoriaMetrics holds %.0f", name, sig, got, held)
			}
			if sig == telemetry.TTFT {
				t.Logf("%s %s over %s: VictoriaMetrics windows %.0f, Prometheus windows %.0f, VictoriaMetrics holds %.0f (%d windows each)",
					name, sig, to.Sub(from), got, promTotal[len(promTotal)-1].Count, held, len(vmEnds))
			}
		}
	}
}

func only(t *testing.T, res []promtest.Sample) float64 {
	t.Helper()
	if len(res) != 1 {
		t.Fatalf("%d series, want 1: %+v", len(res), res)
	}
	return res[0].Value
}
