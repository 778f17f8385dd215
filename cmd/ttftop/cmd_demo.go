package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sim"
)

func demoCommand() command {
	return command{name: "demo", summary: "the dashboard over the built-in simulator: offline, no set-up", usage: demoUsage, bind: runDemo}
}

const demoUsage = `ttftop demo [flags]

Starts the engine simulator on loopback with four models (one healthy, one
that degrades into an SLO breach about 30 s in and recovers, one bursty, and
a reasoning model, DeepSeek-R1-Distill, whose answers start with thinking
tokens) and a simulated dcgm-exporter, then probes, scrapes and shows them
over a 1m window. --webhook, --on-alert and --bell notify as the dashboard
does, so a receiver or hook can be tried against the degrading model's
alerts (the first fires about 40 s in). --race races the four models instead:
the same prompt to each at once, their text side by side as it streams
(--record keeps the race for replay, --json prints its figures; the other
view and notification flags are the dashboard's). --pd adds a disaggregated
model, Llama-3.1-70B served by a prefill and two decode workers behind the
llm-d router, whose KV transfers slow down 40 s in (docs/disaggregated.md).`

func runDemo(fs *pflag.FlagSet) runFunc {
	var vf viewFlags
	var nf notifyFlags
	vf.bind(fs)
	if err := setFlagDefault(fs, "window", monitor.DemoWindow.String()); err != nil {
		// The help shows the window the demo starts at.
		return func(context.Context, []string, io.Writer, io.Writer) error { return err }
	}
	nf.bind(fs)
	seed := fs.Int64("seed", 1, simSeedUsage)
	procs := bindProcs(fs)
	var recordPath string
	bindRecord(fs, &recordPath)
	raceModels := fs.Bool("race", false, demoRaceUsage)
	withPD := fs.Bool("pd", false, pdFlagUsage)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 0 {
			return usagef("demo takes no arguments (got %q)", fs.Args())
		}
		if *raceModels {
			return runDemoRace(ctx, demoRaceFlags{seed: *seed, record: recordPath, json: vf.json}, stdout, stderr)
		}
		if err := applyProcs(fs, *procs); err != nil {
			return err
		}
		stopProfile, err := startDemoCPUProfile(os.Getenv(demoCPUProfileEnv))
		if err != nil {
			return err
		}
		defer stopProfile(stderr)
		s, m, c, err := startDemo(ctx, *seed, *withPD)
		if err != nil {
			return err
		}
		defer s.Close()
		vf.merge(fs, c)
		vf.liveStrip = true // tokens streaming on the first screen
		nf.apply(&c.Notify)
		if recordPath != "" {
			if err := m.AddRecorder(recordPath); err != nil {
				return err
			}
		}
		if !isTerminal(stdout) {
			// On stderr: stdout carries only the read-outs (JSON lines with --json).
			fmt.Fprintf(stderr, "ttftop demo: simulator on %s (metrics %s/metrics, dcgm %s)\n", s.URL(), s.URL(), s.DCGMURL())
		}
		return serve(ctx, m, c, vf, stdout, stderr)
	}
}

// startDemo starts the demo simulator on loopback (with pd, the
// disaggregated deployment too, closed with it) and a monitor that probes
// and scrapes it with the demo's objectives. The caller closes the
// simulator.
func startDemo(ctx context.Context, seed int64, pd bool) (*sim.Server, *monitor.Monitor, *config.Config, error) {
	cfg := sim.DemoConfig()
	cfg.Seed = seed
	cfg.CoarseTiming = true // a demo needs no sub-millisecond token schedule
	s, err := sim.New(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*sim.Server, *monitor.Monitor, *config.Config, error) {
		return nil, nil, nil, errors.Join(err, s.Close())
	}
	if err := s.Start(ctx); err != nil {
		return fail(fmt.Errorf("demo simulator: %w", err))
	}
	c := monitor.DemoConfig(s)
	if pd {
		eps, err := startDemoPD(ctx, s, seed)
		if err != nil {
			return fail(err)
		}
		c.Endpoints = append(c.Endpoints, eps...)
	}
	if err := c.Complete(); err != nil {
		return fail(err)
	}
	m := monitor.New(monitor.Options{Objectives: monitor.DemoObjectives(), SLO: monitor.DemoSLOOptions()})
	if err := m.AddConfig(c); err != nil {
		return fail(err)
	}
	return s, m, c, nil
}

// demoCPUProfileEnv names a file the demo writes a CPU profile of its whole
// run to (simulator, probes, scrapes and views): a developer's tool for
// bench/demo_cpu.sh, deliberately not a flag.
const demoCPUProfileEnv = "TTFTOP_DEMO_CPUPROFILE"

// startDemoCPUProfile starts a CPU profile into path (none when empty) and
// returns what stops it and closes the file.
func startDemoCPUProfile(path string) (func(io.Writer), error) {
	if path == "" {
		return func(io.Writer) {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", demoCPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", demoCPUProfileEnv, err), f.Close())
	}
	return func(stderr io.Writer) {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "ttftop demo: %s: %v\n", demoCPUProfileEnv, err)
		}
	}, nil
}

// setFlagDefault changes a bound flag's default and what the help says
// it is.
func setFlagDefault(fs *pflag.FlagSet, name, value string) error {
	f := fs.Lookup(name)
	if f == nil {
		return fmt.Errorf("no flag --%s", name)
	}
	if err := f.Value.Set(value); err != nil {
		return err
	}
	f.DefValue = f.Value.String()
	return nil
}

// startDemoPD starts the demo's disaggregated deployment beside s (closed
// with it) and returns the endpoints that monitor it.
func startDemoPD(ctx context.Context, s *sim.Server, seed int64) ([]config.Endpoint, error) {
	cfg := sim.DemoPDConfig()
	cfg.Seed = seed
	pd, err := sim.NewPD(cfg)
	if err != nil {
		return nil, err
	}
	s.CloseWith(pd)
	if err := pd.Start(ctx); err != nil {
		return nil, fmt.Errorf("demo P/D deployment: %w", err)
	}
	return monitor.DemoPDEndpoints(pd), nil
}
