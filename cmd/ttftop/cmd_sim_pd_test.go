package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
)

// `sim --pd` refuses, with a usage error naming the flag, what the P/D
// deployment does not serve, before it listens anywhere.
func TestSimPDUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--pd", "--decode", "0"}, "--decode 0: each pool needs 1 worker or more"},
		{[]string{"--pd", "--prefill", "-1"}, "--prefill -1 --decode 2: each pool"},
		{[]string{"--pd", "--metrics-format", "sglang"}, "--metrics-format sglang with --pd"},
		{[]string{"--pd", "--dp", "2"}, "--dp 2 with --pd"},
		{[]string{"--pd", "--demo"}, "--demo and --pd exclude each other"},
		{[]string{"--pd", "--dcgm-listen", "127.0.0.1:0"}, "--dcgm-listen with --pd"},
		{[]string{"--pd", "--hostname", "gpu-1"}, "--hostname with --pd"},
		{[]string{"--pd", "--kv-bandwidth", "0"}, "--kv-bandwidth 0: want GB/s above 0"},
		{[]string{"--pd", "--kv-bandwidth", "NaN"}, "--kv-bandwidth NaN"},
		{[]string{"--pd", "--model", "a:8b", "--model", "b:8b"}, "--pd serves one model; 2 given"},
		{[]string{"--pd", "--listen", "127.0.0.1:65534"}, "the 3 workers take the next ports, beyond 65535"},
		{[]string{"--pd", "--event", "kv_transfer_slow@1s,factor=0.5"}, "factor must be >= 1"},
		{[]string{"--prefill", "2"}, "--prefill needs --pd"},
		{[]string{"--decode", "3"}, "--decode needs --pd"},
		{[]string{"--kv-bandwidth", "2"}, "--kv-bandwidth needs --pd"},
		{[]string{"--write-config", "pd.yaml"}, "--write-config needs --pd"},
	} {
		var out, errs bytes.Buffer
		code := run(context.Background(), append([]string{"sim"}, tc.args...), &out, &errs)
		if code != 2 || !strings.Contains(errs.String(), tc.want) {
			t.Errorf("sim %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs.String(), tc.want)
		}
	}
}

// The deployment is what the flags say: the demo's P/D model unless
// --model names one, the pools' sizes, the link in bytes/s, the events,
// and the workers on the ports after the router's.
func TestSimPDDeployment(t *testing.T) {
	ev, err := sim.ParseEvent("kv_transfer_slow@5s,factor=4,for=10s")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Listen: "127.0.0.1:8000", Seed: 7, Load: 3, Scenario: sim.Scenario{Events: []sim.Event{ev}}}
	f := pdFlags{on: true, prefill: 2, decode: 3, kvGBPerS: 2.5}
	pc, err := f.deployment(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pc.Model.Name != sim.DemoPD || pc.Prefill != 2 || pc.Decode != 3 || pc.KVBandwidth != 2.5e9 || pc.Seed != 7 || pc.Load != 3 {
		t.Errorf("model %q, %d prefill, %d decode, %v B/s, seed %d, load %d; want %s, 2, 3, 2.5e9, 7, 3",
			pc.Model.Name, pc.Prefill, pc.Decode, pc.KVBandwidth, pc.Seed, pc.Load, sim.DemoPD)
	}
	if len(pc.Scenario.Events) != 1 || pc.Scenario.Events[0] != ev {
		t.Errorf("scenario %+v, want the --event %+v", pc.Scenario.Events, ev)
	}
	wantAddrs := []string{"127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8003", "127.0.0.1:8004", "127.0.0.1:8005"}
	if pc.Listen != "127.0.0.1:8000" || !slices.Equal(pc.WorkerListen, wantAddrs) {
		t.Errorf("router on %q, workers on %q; want 127.0.0.1:8000 and %q", pc.Listen, pc.WorkerListen, wantAddrs)
	}
	spec, err := sim.SpecForSize("org/small", "1b")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Models, cfg.Listen = []sim.ModelSpec{spec}, "127.0.0.1:0"
	if pc, err = f.deployment(cfg); err != nil {
		t.Fatal(err)
	}
	if pc.Model.Name != "org/small" || !slices.Equal(pc.WorkerListen, slices.Repeat([]string{"127.0.0.1:0"}, 5)) {
		t.Errorf("model %q, workers on %q; want org/small on free ports", pc.Model.Name, pc.WorkerListen)
	}
}

// The config --write-config writes, read by ttftop's own loader, watches
// the deployment: the router probed, each worker scraped with its own
// role and not probed.
func TestSimPDWatchConfig(t *testing.T) {
	spec, err := sim.SpecForSize("org/small", "1b")
	if err != nil {
		t.Fatal(err)
	}
	pd, err := sim.NewPD(sim.PDConfig{Model: spec, Prefill: 1, Decode: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pd.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := pdWatchConfig(pd)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pd.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	want := map[string]string{pd.Router().URL(): ""}
	for _, w := range pd.Workers() {
		want[w.URL()] = pd.Role(w)
	}
	if len(c.Endpoints) != len(want) {
		t.Fatalf("%d endpoints, want %d:\n%s", len(c.Endpoints), len(want), b)
	}
	for _, ep := range c.Endpoints {
		role, ok := want[ep.URL]
		probed := ep.Probe == nil || !ep.Probe.Disabled
		if !ok || ep.Role != role || ep.Model != "org/small" || probed != (role == "") {
			t.Errorf("endpoint %s: role %q, model %q, probed %v; want role %q (known %v), org/small, probed only the router",
				ep.URL, ep.Role, ep.Model, probed, role, ok)
		}
	}
}
