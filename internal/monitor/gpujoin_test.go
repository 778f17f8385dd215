package monitor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// Quick mode's join: an endpoint beside the exporter gets all its GPUs;
// one elsewhere only those whose Hostname is its host. localhost,
// 127.0.0.1 and ::1 are one machine; 127.0.0.2 is another.
func TestGPUJoinTargets(t *testing.T) {
	var j gpuJoin
	j.add("a", "127.0.0.1")
	j.add("b", "127.0.0.2")
	j.add("c", "localhost")
	j.add("a", "127.0.0.1") // registered once
	got := j.targetsFor("127.0.0.2")()
	if len(got) != 3 {
		t.Fatalf("targets %+v", got)
	}
	want := map[string]string{"a": "127.0.0.1", "b": "", "c": "localhost"}
	for _, tg := range got {
		if tg.Host != want[tg.Endpoint] {
			t.Errorf("%s: host %q, want %q (empty: every GPU of the exporter)", tg.Endpoint, tg.Host, want[tg.Endpoint])
		}
	}
	for _, tg := range j.targetsFor("::1")() {
		if (tg.Endpoint == "b") != (tg.Host != "") {
			t.Errorf("from ::1: %+v", tg)
		}
	}
}

// Two simulators on two loopback hosts, each with its own dcgm-exporter,
// different GPUs (an L4 and an H100) and different load, in quick mode
// (URLs and --dcgm, no GPU map): each endpoint gets its own host's GPU,
// never the other's: the L4 model's power stays under the L4's 72 W.
func TestQuickModeTwoHostsOwnGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two simulators for several seconds")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := func(ip string, load, model int) *sim.Server {
		t.Helper()
		models := sim.DefaultModels()[model : model+1]
		s, err := sim.New(sim.Config{Listen: ip + ":0", DCGMListen: ip + ":0", Seed: int64(load), Load: load, Models: models})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Skipf("cannot listen on %s: %v", ip, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	quiet, busy := start("127.0.0.1", 0, 2), start("127.0.0.2", 16, 0) // L4, H100 SXM
	c := &config.Config{Endpoints: []config.Endpoint{
		{URL: quiet.URL(), Probe: &probe.Settings{Interval: slo.Duration(time.Second)}},
		{URL: busy.URL(), Probe: &probe.Settings{Interval: slo.Duration(time.Second)}},
	}, DCGM: []gpu.Settings{{URL: quiet.DCGMURL()}, {URL: busy.DCGMURL()}}}
	m := runConfig(t, ctx, c)
	host := func(name string) string { h, _, _ := strings.Cut(name, ":"); return h }
	var snap telemetry.Snapshot
	waitFor(t, "each host's GPU joined to its endpoint, with power", func() bool {
		snap = m.Store.Snapshot(time.Now(), time.Minute)
		n := 0
		for _, ep := range snap.Endpoints {
			if v, ok := ep.Signals[telemetry.GPUPower]; ok && v.Value != nil {
				n++
			}
		}
		return n == 2 && len(snap.GPUs) == 2
	})
	limit := map[string]float64{}
	for _, g := range snap.GPUs {
		src := strings.TrimPrefix(g.Source, "dcgm:http://")
		if len(g.Endpoints) != 1 || host(g.Endpoints[0]) != host(src) {
			t.Fatalf("GPU of %s joined to %v", src, g.Endpoints)
		}
		limit[host(src)] = *g.PowerLimitW
		t.Logf("%s: %s %.0f/%.0f W → %v", host(src), g.Name, *g.PowerW, *g.PowerLimitW, g.Endpoints)
	}
	if limit["127.0.0.1"] != 72 || limit["127.0.0.2"] != 700 {
		t.Fatalf("limits %v: want the L4 on 127.0.0.1, the H100 on 127.0.0.2", limit)
	}
	for _, ep := range snap.Endpoints {
		v := ep.Signals[telemetry.GPUPower]
		if v.Value == nil || !strings.Contains(v.Source, host(ep.Name)) || *v.Value > limit[host(ep.Name)] {
			t.Fatalf("%s: power %+v is not its host's GPU (limit %v W)", ep.Name, v, limit[host(ep.Name)])
		}
	}
}

// Quick mode with two models served by one host and its one DCGM page: the
// join gives both endpoints the host's GPUs, so each shows the host's
// power marked shared by both, and the same J/token (the host's energy
// over both models' tokens; sources/gpu checks the figure against the
// simulator's counters).
func TestQuickModeTwoModelsShareHost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulator for several seconds")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := sim.New(sim.Config{Listen: "127.0.0.1:0", DCGMListen: "127.0.0.1:0", Seed: 5, Load: 4, Models: sim.DefaultModels()[:2]})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c := &config.Config{Endpoints: []config.Endpoint{{URL: s.URL(), Probe: &probe.Settings{Interval: slo.Duration(time.Second)}}},
		DCGM: []gpu.Settings{{URL: s.DCGMURL()}}}
	m := runConfig(t, ctx, c)
	var eps []telemetry.EndpointSnapshot
	waitFor(t, "both models with shared power and J/token", func() bool {
		eps = eps[:0]
		for _, ep := range m.Store.Snapshot(time.Now(), time.Minute).Endpoints {
			if e := ep.Signals[telemetry.EnergyPerToken]; e.Value != nil && e.Shared != nil {
				eps = append(eps, ep)
			}
		}
		return len(eps) == 2
	})
	names := []string{eps[0].Name, eps[1].Name}
	for _, ep := range eps {
		p, e := ep.Signals[telemetry.GPUPower], ep.Signals[telemetry.EnergyPerToken]
		t.Logf("%s: %.1f W, %.3f J/token, %+v", ep.Name, *p.Value, *e.Value, e.Shared)
		for _, sh := range []*telemetry.GPUShare{p.Shared, e.Shared} {
			if sh == nil || sh.Scope != "host" || sh.By != 2 || strings.Join(sh.Endpoints, ",") != strings.Join(names, ",") {
				t.Errorf("%s: share %+v, want the host's, shared by %v", ep.Name, sh, names)
			}
		}
		if !strings.Contains(e.Source, "2 endpoints sharing") {
			t.Errorf("%s: J/token source %q", ep.Name, e.Source)
		}
	}
	if *eps[0].Signals[telemetry.EnergyPerToken].Value != *eps[1].Signals[telemetry.EnergyPerToken].Value {
		t.Errorf("J/token differs between the models sharing the host: %v, %v",
			*eps[0].Signals[telemetry.EnergyPerToken].Value, *eps[1].Signals[telemetry.EnergyPerToken].Value)
	}
}

// runConfig completes c, runs a monitor of it until the test ends (ctx
// cancelled by then, or the cleanup cancels it) and returns it.
func runConfig(t *testing.T, ctx context.Context, c *config.Config) *Monitor {
	t.Helper()
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	m := New(Options{})
	if err := m.AddConfig(c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}
