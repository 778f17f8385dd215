package gpu

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

// sumSeries adds up the values of the series of family name whose label
// text contains match, read straight off the page (not through the
// parsers under test).
func sumSeries(t *testing.T, url, name, match string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var sum float64
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") || !strings.Contains(line, match) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
		n++
	}
	if n == 0 {
		t.Fatalf("no %s{%s} on %s", name, match, url)
	}
	return sum
}

// energyRun drives a simulator with a DCGM page through the real scrape
// and DCGM sources into a store, on a clock that advances 1 s per round,
// so each round's power (Δenergy/1 s) and rate (Δtokens/1 s) have equal
// weight and their window means divide to ΣΔE/ΣΔN.
type energyRun struct {
	srv   *sim.Server
	store *telemetry.Store
	now   time.Time
	round func()
}

func startEnergyRun(t *testing.T, cfg sim.Config, targets []Target) *energyRun {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a simulator")
	}
	cfg.Listen, cfg.DCGMListen = "127.0.0.1:0", "127.0.0.1:0"
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := &energyRun{srv: srv, store: telemetry.NewStore(telemetry.StoreConfig{}), now: time.Unix(1_000_000, 0)}
	clock := func() time.Time { return r.now }
	dcgm := New(Config{URL: srv.DCGMURL(), Now: clock, Targets: targets}, r.store)
	// Rates between two scrapes (a one-interval rate window): each round's
	// tok/s is its own Δtokens/1 s, as the equal weights above need.
	sc := scrape.New(scrape.Config{URL: srv.URL(), Name: "sim", Now: clock, RateWindow: time.Second}, r.store)
	r.round = func() {
		t.Helper()
		if err := sc.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := dcgm.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// jPerToken is the simulator's own J/token over the measured rounds:
// the pages were read just before and just after the first and the last
// round's scrapes, so the sources saw counters between those reads and
// the figure they can derive lies within [lo, hi], however long a loaded
// machine took between a read and a scrape.
type jPerToken struct {
	lo, hi, joules, tokens float64
}

// near reports whether got lies within the bracket, widened by tol.
func (j jPerToken) near(got, tol float64) bool {
	return got >= j.lo*(1-tol) && got <= j.hi*(1+tol)
}

// measure runs a baseline round and then rounds rounds, each long enough
// (at least perRound tokens) for the figure to mean something, reading
// the simulator's energy and token counters off its pages (matching
// label text) around the first and the last round.
func (r *energyRun) measure(t *testing.T, rounds int, perRound float64, energyMatch, tokenMatch string) jPerToken {
	t.Helper()
	energy := func() float64 {
		return sumSeries(t, r.srv.DCGMURL()+"/metrics", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", energyMatch)
	}
	count := func() float64 {
		return sumSeries(t, r.srv.URL()+"/metrics", "vllm:generation_tokens_total", tokenMatch)
	}
	e0lo, n0lo := energy(), count()
	r.round() // baseline: outside the window
	e0hi, n0hi := energy(), count()
	deadline := time.Now().Add(20 * time.Second)
	var e1lo, n1lo float64
	for i := range rounds {
		before := count()
		for count() < before+perRound && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // real time for the simulator to run; not synchronisation
		}
		r.now = r.now.Add(time.Second)
		if i == rounds-1 {
			e1lo, n1lo = energy(), count()
		}
		r.round()
	}
	e1hi, n1hi := energy(), count()
	return jPerToken{lo: (e1lo - e0hi) / 1000 / (n1hi - n0lo), hi: (e1hi - e0lo) / 1000 / (n1lo - n0hi),
		joules: (e1hi - e0lo) / 1000, tokens: n1hi - n0lo}
}

// Energy per output token through the real sources and the store,
// against the simulator's own counters: ΔTOTAL_ENERGY_CONSUMPTION of the
// model's two GPUs ÷ Δvllm:generation_tokens_total over the same rounds.
func TestEnergyPerTokenAgainstSimulator(t *testing.T) {
	model := sim.ModelSpec{Name: "org/b", Params: 3.21e9, KVBytesPerToken: 114688, GPU: "H100 SXM", NumGPUs: 2, MaxBatch: 8, MeanOutputTokens: 32}
	ep := "sim/org/b"
	r := startEnergyRun(t, sim.Config{Seed: 1, Load: 4, Models: []sim.ModelSpec{model}},
		[]Target{{Endpoint: ep, Pod: sim.PodName("org/b")}})
	const rounds = 6
	want := r.measure(t, rounds, 24, `pod="`+sim.PodName("org/b")+`"`, `model_name="org/b"`)

	got := r.store.Snapshot(r.now, rounds*time.Second)
	var es *telemetry.EndpointSnapshot
	for i := range got.Endpoints {
		if got.Endpoints[i].Name == ep {
			es = &got.Endpoints[i]
		}
	}
	if es == nil {
		t.Fatalf("no endpoint %s in %+v", ep, got.Endpoints)
	}
	e := es.Signals[telemetry.EnergyPerToken]
	if e.Value == nil || e.Approx {
		t.Fatalf("energy per token %+v", e)
	}
	t.Logf("store %.4f J/token, simulator counters %.4f–%.4f J/token (ΔE %.1f J, ΔN %.0f tokens); power %v W", *e.Value, want.lo, want.hi,
		want.joules, want.tokens, *es.Signals[telemetry.GPUPower].Value)
	if !want.near(*e.Value, 0.02) {
		t.Fatalf("energy per token %.4f J, simulator says %.4f–%.4f J", *e.Value, want.lo, want.hi)
	}
	if len(got.GPUs) != 2 || got.GPUs[0].Endpoints[0] != ep || got.GPUs[0].PowerW == nil || got.GPUs[0].TemperatureCelsius == nil {
		t.Fatalf("devices %+v", got.GPUs)
	}
}

// Two models served on one host with one DCGM page (quick mode: every
// model of the host joined to all its GPUs): each endpoint's energy per
// token is the host's, ΔTOTAL_ENERGY_CONSUMPTION of every GPU ÷ both
// models' Δvllm:generation_tokens_total, within 2 %, never the host's
// whole energy over one model's tokens; power says it is shared by 2.
func TestEnergyPerTokenSharedHostAgainstSimulator(t *testing.T) {
	models := []sim.ModelSpec{
		{Name: "org/a", Params: 8.03e9, KVBytesPerToken: 131072, GPU: "H100 SXM", NumGPUs: 1, MaxBatch: 8, MeanOutputTokens: 32},
		{Name: "org/b", Params: 3.21e9, KVBytesPerToken: 114688, GPU: "H100 SXM", NumGPUs: 2, MaxBatch: 8, MeanOutputTokens: 32},
	}
	eps := []string{"sim/org/a", "sim/org/b"}
	r := startEnergyRun(t, sim.Config{Seed: 2, Load: 4, Models: models},
		[]Target{{Endpoint: eps[0], IfMatched: true}, {Endpoint: eps[1], IfMatched: true}})
	const rounds = 6
	want := r.measure(t, rounds, 48, `gpu="`, `model_name="`)

	got := r.store.Snapshot(r.now, rounds*time.Second)
	seen := 0
	for _, es := range got.Endpoints {
		if es.Name != eps[0] && es.Name != eps[1] {
			continue
		}
		seen++
		e, p := es.Signals[telemetry.EnergyPerToken], es.Signals[telemetry.GPUPower]
		if e.Value == nil || e.Approx || p.Value == nil {
			t.Fatalf("%s: energy per token %+v, power %+v", es.Name, e, p)
		}
		t.Logf("%s: store %.4f J/token, simulator counters %.4f–%.4f J/token (ΔE %.1f J over both models' ΔN %.0f tokens); power %.1f W shared %+v",
			es.Name, *e.Value, want.lo, want.hi, want.joules, want.tokens, *p.Value, p.Shared)
		if !want.near(*e.Value, 0.02) {
			t.Errorf("%s: energy per token %.4f J, the host's is %.4f–%.4f J", es.Name, *e.Value, want.lo, want.hi)
		}
		for _, sh := range []*telemetry.GPUShare{p.Shared, e.Shared} {
			if sh == nil || sh.By != 2 || sh.Scope != "host" || sh.Partial {
				t.Errorf("%s: share %+v, want the host's, shared by 2", es.Name, sh)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("endpoints %d of 2 in %+v", seen, got.Endpoints)
	}
}
