package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/slo"
)

func simCommand() command {
	return command{name: "sim", summary: "run the built-in vLLM-compatible engine simulator", usage: "ttftop sim [flags]", bind: runSim}
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
func (l *listFlag) Type() string       { return "string" }

func runSim(fs *pflag.FlagSet) runFunc {
	cfg := sim.Config{}
	var models, events listFlag
	var modelList, scenarioFile string
	var demo bool
	var dp int
	var pd pdFlags
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:8000", "OpenAI API and /metrics address (loopback by default)")
	fs.StringVar(&cfg.DCGMListen, "dcgm-listen", "127.0.0.1:9400", "dcgm-exporter style GPU metrics address (loopback by default; empty disables)")
	fs.Int64Var(&cfg.Seed, "seed", 1, simSeedUsage)
	fs.IntVar(&cfg.Load, "load", 4, "background client streams per model (0 = idle until probed)")
	fs.Var(&models, "model", "serve `NAME[:SIZE]` (repeatable; SIZE like 1b, 3b, 8b, 14b, 32b, 70b; default 8b)")
	fs.StringVar(&modelList, "models", "", "comma-separated `NAME[:SIZE]` list, same as repeated --model")
	fs.StringVar(&scenarioFile, "scenario", "", "scenario YAML `FILE` (events: prefill_slow, bandwidth, outage, burst, kv_pressure, network_delay, prefix_miss, spec_accept, kv_transfer_slow with --pd; docs/diagnosis.md)")
	fs.Var(&events, "event", "scenario event `KIND@AT[,key=value...]`, e.g. bandwidth@30s,factor=0.25,for=45s (repeatable)")
	fs.StringVar(&cfg.MetricsFormat, "metrics-format", sim.FormatVLLM, "metrics exposition: vllm or sglang")
	fs.StringVar(&cfg.Hostname, "hostname", "ttftop-sim", "Hostname label of the DCGM series")
	fs.BoolVar(&demo, "demo", false, demoFlagUsage)
	fs.IntVar(&dp, "dp", 1, "data-parallel ranks per model (vLLM --data-parallel-size): each rank an engine of its own, labelled engine=\"N\"; an event's rank=N touches one")
	pd.bind(fs)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
		if err := pd.validate(fs, cfg, demo, dp); err != nil {
			return err
		}
		if demo {
			useDemo(&cfg)
		}
		if modelList != "" {
			models = append(models, strings.Split(modelList, ",")...)
		}
		for _, m := range models {
			spec, err := parseModelFlag(m)
			if err != nil {
				return usageError{msg: err.Error()}
			}
			cfg.Models = append(cfg.Models, spec)
		}
		if dp < 1 {
			return usagef("--dp %d: want 1 or more ranks", dp)
		}
		if dp > 1 && len(cfg.Models) == 0 {
			cfg.Models = sim.DefaultModels()
		}
		for i := range cfg.Models {
			cfg.Models[i].DPRanks = dp
		}
		if scenarioFile != "" {
			sc, err := sim.LoadScenario(scenarioFile)
			if err != nil {
				return usageError{msg: err.Error()}
			}
			cfg.Scenario.Events = append(cfg.Scenario.Events, sc.Events...)
		}
		for _, e := range events {
			ev, err := sim.ParseEvent(e)
			if err != nil {
				return usageError{msg: err.Error()}
			}
			cfg.Scenario.Events = append(cfg.Scenario.Events, ev)
		}

		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		if pd.on {
			return runSimPD(ctx, pd, cfg, stderr)
		}
		srv, err := sim.New(cfg)
		if err != nil {
			return usageError{msg: err.Error()}
		}
		defer srv.Close()
		if err := srv.Start(ctx); err != nil {
			return err
		}
		printSimBanner(stdout, srv, cfg)
		<-ctx.Done()
		fmt.Fprintln(stdout, "ttftop sim: stopping")
		return nil
	}
}

// parseModelFlag reads NAME[:SIZE]; a suffix that is not a size stays part
// of the name.
func parseModelFlag(v string) (sim.ModelSpec, error) {
	v = strings.TrimSpace(v)
	name, size := v, ""
	if i := strings.LastIndexByte(v, ':'); i > 0 {
		if s := v[i+1:]; len(s) > 1 && strings.HasSuffix(strings.ToLower(s), "b") && strings.Trim(s[:len(s)-1], "0123456789.") == "" {
			name, size = v[:i], s
		}
	}
	if name == "" {
		return sim.ModelSpec{}, errors.New("sim: empty model name")
	}
	return sim.SpecForSize(name, size)
}

func printSimBanner(w io.Writer, srv *sim.Server, cfg sim.Config) {
	models := srv.Models()
	dcgm := "DCGM metrics disabled"
	if u := srv.DCGMURL(); u != "" {
		dcgm = "DCGM metrics on " + u + "/metrics"
	}
	fmt.Fprintf(w, "ttftop sim: serving %d models on %s (OpenAI API /v1, metrics /metrics, %s format), %s\n",
		len(models), srv.URL(), cfg.MetricsFormat, dcgm)
	for _, m := range models {
		fmt.Fprintf(w, "  %-36s %5.1fB params on %d× %-9s  TPOT ≈ %.1f ms at batch 1, max batch %d\n",
			m.Name, m.Params/1e9, m.NumGPUs, m.GPU, m.DecodeStepTime(0, 1)*1e3, m.MaxBatch)
		if m.DPRanks > 1 {
			fmt.Fprintf(w, "  %-36s %d data-parallel ranks, each on GPUs of its own (engine=\"0\"…)\n", "", m.DPRanks)
		}
	}
	if cfg.Load > 0 {
		fmt.Fprintf(w, "  background load: %d streams per model\n", cfg.Load)
	}
	printScenario(w, cfg.Scenario.Events)
	fmt.Fprintln(w, "Press Ctrl-C to stop.")
}

// printScenario says when each event happens and to what.
func printScenario(w io.Writer, events []sim.Event) {
	for _, e := range events {
		target := e.Model
		if target == "" {
			target = "all models"
		}
		if e.Rank != nil {
			target += fmt.Sprintf(" (rank %d)", *e.Rank)
		}
		fmt.Fprintf(w, "  scenario: %s at %s for %s on %s\n", e.Kind, slo.FormatDuration(e.At), durationOrEnd(e.For), target)
	}
}

func durationOrEnd(d time.Duration) string {
	if d > 0 {
		return slo.FormatDuration(d)
	}
	return "the rest of the run"
}

// useDemo gives cfg the demo's models, scenario and prefix-cache traffic
// (what `ttftop demo` serves); the flags' listen addresses, load and seed
// stay.
func useDemo(cfg *sim.Config) {
	d := sim.DemoConfig()
	cfg.Models, cfg.Scenario = d.Models, d.Scenario
	cfg.PrefixCaching, cfg.SharedPrefixShare = d.PrefixCaching, d.SharedPrefixShare
}
