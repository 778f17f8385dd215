package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strconv"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sim"
)

// pdFlags are sim's flags for a disaggregated deployment (--pd): one
// model served by prefill and decode workers behind the llm-d router.
type pdFlags struct {
	on              bool
	prefill, decode int
	kvGBPerS        float64
	writeConfig     string
}

func (f *pdFlags) bind(fs *pflag.FlagSet) {
	d := sim.DemoPDConfig()
	fs.BoolVar(&f.on, "pd", false, pdFlagUsage)
	fs.IntVar(&f.prefill, "prefill", d.Prefill, "with --pd: prefill workers")
	fs.IntVar(&f.decode, "decode", d.Decode, "with --pd: decode workers")
	fs.Float64Var(&f.kvGBPerS, "kv-bandwidth", sim.DefaultKVBandwidth/1e9,
		"with --pd: `GB/s` (bytes) of each KV transfer from a prefill to a decode worker; a kv_transfer_slow event multiplies the transfer's time")
	fs.StringVar(&f.writeConfig, "write-config", "", "with --pd: write a ttftop config `FILE` that watches the deployment: ttftop --config FILE")
}

// validate refuses what the flags cannot mean together: a --pd flag
// without --pd, and with it whatever the P/D deployment does not serve
// (its workers are vLLM's on one engine each, with no DCGM page).
func (f pdFlags) validate(fs *pflag.FlagSet, cfg sim.Config, demo bool, dp int) error {
	if !f.on {
		for _, name := range []string{"prefill", "decode", "kv-bandwidth", "write-config"} {
			if fs.Changed(name) {
				return usagef("--%s needs --pd", name)
			}
		}
		return nil
	}
	switch {
	case demo:
		return usagef("--demo and --pd exclude each other: `ttftop demo --pd` runs the demo's P/D model beside its others; its KV slow-down is --event kv_transfer_slow@40s,factor=8,for=30s,every=2m")
	case dp != 1:
		return usagef("--dp %d with --pd: the P/D deployment does not combine with data-parallel ranks", dp)
	case cfg.MetricsFormat != sim.FormatVLLM:
		return usagef("--metrics-format %s with --pd: the P/D workers are vLLM's with the NIXL connector; only %s", cfg.MetricsFormat, sim.FormatVLLM)
	case fs.Changed("dcgm-listen") && cfg.DCGMListen != "":
		return usagef("--dcgm-listen with --pd: the P/D deployment serves no DCGM page")
	case fs.Changed("hostname"):
		return usagef("--hostname with --pd: it labels the DCGM page, which the P/D deployment does not serve")
	case f.prefill < 1 || f.decode < 1:
		return usagef("--prefill %d --decode %d: each pool needs 1 worker or more", f.prefill, f.decode)
	case !(f.kvGBPerS > 0) || math.IsInf(f.kvGBPerS, 0):
		return usagef("--kv-bandwidth %v: want GB/s above 0", f.kvGBPerS)
	}
	return nil
}

// deployment is the P/D deployment the flags ask for: the demo's
// disaggregated model (or the one --model names), the router on
// --listen and the workers beside it (workerAddrs).
func (f pdFlags) deployment(cfg sim.Config) (sim.PDConfig, error) {
	if len(cfg.Models) > 1 {
		return sim.PDConfig{}, usagef("--pd serves one model; %d given", len(cfg.Models))
	}
	addrs, err := workerAddrs(cfg.Listen, f.prefill+f.decode)
	if err != nil {
		return sim.PDConfig{}, err
	}
	d := sim.DemoPDConfig()
	pc := sim.PDConfig{Model: d.Model, Prefill: f.prefill, Decode: f.decode, Seed: cfg.Seed, Load: cfg.Load,
		KVBandwidth: f.kvGBPerS * 1e9, Scenario: cfg.Scenario, Listen: cfg.Listen, WorkerListen: addrs}
	if len(cfg.Models) == 1 {
		pc.Model = cfg.Models[0]
	}
	return pc, nil
}

// workerAddrs are the workers' addresses beside the router's listen:
// its port + 1, + 2… in order (prefill first), so that a config written
// once stays right when the simulator restarts; free ports each when the
// router's port is 0 (or listen is empty).
func workerAddrs(listen string, n int) ([]string, error) {
	addrs := make([]string, n)
	if listen == "" {
		return addrs, nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, usagef("--listen %q: %v", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > math.MaxUint16 {
		return nil, usagef("--listen %q: want a port number", listen)
	}
	if p != 0 && p+n > math.MaxUint16 {
		return nil, usagef("--listen %q: the %d workers take the next ports, beyond %d", listen, n, math.MaxUint16)
	}
	for i := range addrs {
		wp := 0
		if p != 0 {
			wp = p + 1 + i
		}
		addrs[i] = net.JoinHostPort(host, strconv.Itoa(wp))
	}
	return addrs, nil
}

// runSimPD serves the P/D deployment until ctx ends, saying on stderr
// what it serves and how to watch it.
func runSimPD(ctx context.Context, f pdFlags, cfg sim.Config, stderr io.Writer) error {
	pc, err := f.deployment(cfg)
	if err != nil {
		return err
	}
	pd, err := sim.NewPD(pc)
	if err != nil {
		return usageError{msg: err.Error()}
	}
	defer pd.Close()
	if err := pd.Start(ctx); err != nil {
		return err
	}
	watch, err := pdWatchConfig(pd)
	if err != nil {
		return err
	}
	if f.writeConfig != "" {
		if err := os.WriteFile(f.writeConfig, watch, 0o644); err != nil {
			return err
		}
	}
	printSimPDBanner(stderr, pd, pc, f.writeConfig, watch)
	<-ctx.Done()
	fmt.Fprintln(stderr, "ttftop sim: stopping")
	return nil
}

// pdWatchConfig is a ttftop config that watches pd as `demo --pd` does:
// the router probed (what users get) and scraped, each worker scraped
// with its role and not probed. The roles must be given: a vLLM page
// does not say its role (docs/disaggregated.md).
func pdWatchConfig(pd *sim.PD) ([]byte, error) {
	type probeBlock struct {
		Disabled bool `yaml:"disabled"`
	}
	type endpoint struct {
		URL   string      `yaml:"url"`
		Model string      `yaml:"model"`
		Role  string      `yaml:"role,omitempty"`
		Probe *probeBlock `yaml:"probe,omitempty"`
	}
	var doc struct {
		Endpoints []endpoint `yaml:"endpoints"`
	}
	for _, ep := range monitor.DemoPDEndpoints(pd) {
		e := endpoint{URL: ep.URL, Model: ep.Model, Role: ep.Role}
		if ep.Probe != nil && ep.Probe.Disabled {
			e.Probe = &probeBlock{Disabled: true}
		}
		doc.Endpoints = append(doc.Endpoints, e)
	}
	var b bytes.Buffer
	b.WriteString("# ttftop sim --pd: the router (probed, its page scraped) and each worker (scraped with its role)\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func printSimPDBanner(w io.Writer, pd *sim.PD, pc sim.PDConfig, configPath string, watch []byte) {
	fmt.Fprintf(w, "ttftop sim: serving %s disaggregated: %d prefill and %d decode vLLM workers (NIXL connector) behind the llm-d router\n",
		pd.Model(), len(pd.Prefill()), len(pd.Decode()))
	fmt.Fprintf(w, "  %-8s %-26s OpenAI API /v1, the router's metrics /metrics\n", "router", pd.Router().URL())
	for _, s := range pd.Workers() {
		fmt.Fprintf(w, "  %-8s %-26s vLLM metrics /metrics\n", pd.Role(s), s.URL())
	}
	if ms := pd.Workers()[0].Models(); len(ms) > 0 {
		m := ms[0]
		fmt.Fprintf(w, "  each worker: %.1fB params on %d× %s, TPOT ≈ %.1f ms at batch 1; KV transfers at %g GB/s\n",
			m.Params/1e9, m.NumGPUs, m.GPU, m.DecodeStepTime(0, 1)*1e3, pc.KVBandwidth/1e9)
	}
	if pc.Load > 0 {
		fmt.Fprintf(w, "  background load: %d streams through the router\n", pc.Load)
	}
	printScenario(w, pc.Scenario.Events)
	if configPath != "" {
		fmt.Fprintf(w, "Watch it: ttftop --config %s (or ttftop snapshot --config %s --json)\n", configPath, configPath)
	} else {
		fmt.Fprintf(w, "Watch it: save this config as pd.yaml (or give --write-config FILE), then ttftop --config pd.yaml; a vLLM page does not say its role, the config does:\n%s", watch)
	}
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}
