package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/internal/sweep"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

const sweepSummary = "ramp concurrency against an endpoint and find the knee: the most load that meets every objective"

func sweepCommand() command {
	return command{name: "sweep", summary: sweepSummary, usage: sweepUsage, bind: parsed(parseSweepArgs, runSweep)}
}

const sweepUsage = `ttftop sweep URL [flags]
       ttftop sweep [ssh://[user@]host[:port]] [flags]

` + sweepSummary + `.
Steps through concurrency 1, 2, 4, … up to --max-concurrency (closed loop:
that many requests in flight, back to back), holds each step until its
TTFT and TPOT p95 move less than --tolerance between checks, and stops
early at over-saturation or when an objective is exceeded --stop-factor
times over. The knee is the highest concurrency that, with every lower
step, meets every --slo-* objective. Prints a KEDA ScaledObject whose
prometheus trigger fires past the knee's load, on the engine's TPOT
histogram at a bucket bound it can resolve (and says when it cannot).
All figures are the client's (probe) measurements; see docs/sweep.md.
With no URL, the LLM server found on this machine; with an ssh:// target,
the one found on that host, measured through the SSH connection (its
latencies include the tunnel); see docs/discovery.md.`

var sweepMaxRPMUsage = fmt.Sprintf("ceiling on requests started per minute (default: %d per stream of --max-concurrency, at least %d, at most %d: "+
	"a request every 100 ms per stream, which a closed loop against an LLM never reaches; a step it holds back below 90 %% in flight ends the sweep)",
	sweep.StartsPerStreamPerMinute, probe.DefaultLimits().MaxPerMinute, probe.AbsoluteMaxPerMinute)

// sweepConfig is what the flags say.
type sweepConfig struct {
	sweep      sweep.Config
	keda       sweep.KEDA
	json       bool
	prompt     string
	promptFile string
	targets    targetFlags
	find       bool            // no URL, or an ssh:// target: find the endpoint
	kedaSet    map[string]bool // the --keda-* flags given
	sshTargets []string        // where to find it; none: this machine
}

func runSweep(ctx context.Context, cfg sweepConfig, stdout, stderr io.Writer) (err error) {
	if cfg.find {
		defer func() { err = errors.Join(err, cfg.targets.close()) }()
		if cfg.sweep.Probe, err = cfg.targets.findOne(cfg.sweep.Probe, cfg.sshTargets, stderr); err != nil {
			return err
		}
		kedaFromPod(&cfg.keda, cfg.sweep.Probe.Labels, cfg.kedaSet)
	}
	if cfg.sweep.Probe.Auth.Insecure {
		if _, err := fmt.Fprintln(stderr, "WARNING: TLS certificate verification is OFF (--insecure): the endpoint is not authenticated"); err != nil {
			return err
		}
	}
	view := newSweepView(stderr, isTerminal(stderr), sweep.LinesOf(cfg.sweep.Objectives))
	cfg.sweep.Progress = view.update
	rep, err := sweep.Run(ctx, cfg.sweep)
	if err != nil {
		return err
	}
	if err := view.finish(); err != nil {
		return err
	}
	var snippet string
	tr, kerr := sweep.TriggerOf(rep, cfg.keda.Window, cfg.keda.Matchers...)
	if kerr == nil {
		snippet, kerr = sweep.Snippet(cfg.keda, rep, tr)
	}
	if cfg.json {
		out := struct {
			Schema string `json:"schema"`
			*sweep.Report
			KEDA    string         `json:"keda,omitempty"`
			Trigger *sweep.Trigger `json:"keda_trigger,omitempty"`
		}{telemetry.JSONSchema, rep, snippet, nil}
		if kerr == nil {
			out.Trigger = &tr
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else if err := printSweep(stdout, rep, cfg, snippet, tr, kerr); err != nil {
		return err
	}
	if rep.Stop == "interrupted" {
		return ctx.Err()
	}
	if rep.Knee == nil {
		return exitError{code: 1, err: errors.New("no knee: concurrency 1 already misses an objective")}
	}
	return nil
}

func printSweep(w io.Writer, rep *sweep.Report, cfg sweepConfig, snippet string, tr sweep.Trigger, kerr error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep of %s (%s), figures measured by the client\n", rep.Endpoint, rep.URL)
	if err := sweep.Table(&b, rep.Steps, nil, sweep.LinesOf(cfg.sweep.Objectives)); err != nil {
		return err
	}
	fmt.Fprintf(&b, "stopped: %s\n", rep.Stop)
	if h := rep.HeldBack; h != nil {
		fmt.Fprintf(&b, "held back: concurrency %d ran with %.1f in flight (!), so it and the steps above it are no knee; %s\n",
			h.Concurrency, h.InFlight, heldBackHint(h.By))
	}
	if k := rep.Knee; k != nil {
		fmt.Fprintf(&b, "knee: concurrency %d (TTFT p95 %s, TPOT p95 %s, %s output tok/s), the highest meeting every objective\n",
			k.Concurrency, fmtMS(k.TTFTp95ms), fmtMS(k.TPOTp95ms), fmtNum(k.OutputTPS))
	} else {
		b.WriteString("knee: none, concurrency 1 already misses an objective\n")
	}
	if kerr != nil {
		fmt.Fprintf(&b, "no KEDA snippet: %v\n", kerr)
	} else {
		fmt.Fprintf(&b, "KEDA trigger: %s, threshold %.4g; it reads %s\n", tr.Series, tr.Threshold, tr.Reads)
		if tr.Warning != "" {
			fmt.Fprintf(&b, "warning: %s\n", tr.Warning)
		}
		b.WriteString("\n" + snippet)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// heldBackHint says how to let the sweep reach its target.
func heldBackHint(h sweep.Holder) string {
	switch h {
	case sweep.HeldByRateCeiling:
		return "raise --max-rpm to load it fully"
	case sweep.HeldByServer:
		return "the server refused the load (429): its own limit is the capacity"
	}
	return "rerun on a less loaded machine"
}

func fmtMS(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f ms", *v)
}

func fmtNum(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", *v)
}

// sweepView shows progress on stderr: a table redrawn in place on a
// terminal, one line per check otherwise.
type sweepView struct {
	w     io.Writer
	tty   bool
	lines sweep.Lines

	mu    sync.Mutex
	drawn int // lines of the last redraw, to move back over
	err   error
	last  time.Time
}

func newSweepView(w io.Writer, tty bool, lines sweep.Lines) *sweepView {
	return &sweepView{w: w, tty: tty, lines: lines}
}

func (v *sweepView) update(p sweep.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return
	}
	if !v.tty {
		s, running := p.Current, true
		if s == nil {
			s, running = &p.Steps[len(p.Steps)-1], false
		}
		_, v.err = fmt.Fprintln(v.w, "ttftop sweep: "+sweep.Line(*s, running))
		return
	}
	if p.Current != nil && time.Since(v.last) < 200*time.Millisecond {
		return // at most five redraws a second
	}
	v.last = time.Now()
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", v.drawn) // back to the top of the last drawing, clear below
	}
	var t strings.Builder
	if err := sweep.Table(&t, p.Steps, p.Current, v.lines); err != nil {
		v.err = err
		return
	}
	b.WriteString(t.String())
	v.drawn = strings.Count(t.String(), "\n")
	_, v.err = io.WriteString(v.w, b.String())
}

// finish clears the live table (the final one goes to stdout).
func (v *sweepView) finish() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tty && v.drawn > 0 && v.err == nil {
		_, v.err = fmt.Fprintf(v.w, "\x1b[%dA\x1b[J", v.drawn)
	}
	return v.err
}

func parseSweepArgs(fs *pflag.FlagSet) func(positional []string) (sweepConfig, error) {
	var cfg sweepConfig
	s := &cfg.sweep
	o := &s.Probe
	var req requestFlags
	var maxRPM int
	req.bind(fs)
	fs.IntVar(&s.MaxConcurrency, "max-concurrency", probe.DefaultLimits().MaxConcurrency, maxConcurrencyUsage)
	fs.IntVar(&maxRPM, "max-rpm", 0, sweepMaxRPMUsage)
	fs.IntVar(&s.MinRequests, "min-requests", sweep.DefaultMinRequests, "judged requests per step before it may count as stable")
	durationVar(fs, &s.MaxStepTime, "max-step-time", sweep.DefaultMaxStepTime, "end a step that has not settled after this long")
	fs.Float64Var(&s.Tolerance, "tolerance", sweep.DefaultTolerance, "a step is stable when its p95s moved less than this share between checks")
	fs.Float64Var(&s.StopFactor, "stop-factor", sweep.DefaultStopFactor, "stop when an objective is exceeded this many times over")
	fs.StringVar(&cfg.prompt, "prompt", probe.DefaultPrompt, "built-in prompt (short, medium, long) or the prompt text")
	fs.StringVar(&cfg.promptFile, "prompt-file", "", "read the prompt from this file")
	fs.BoolVar(&cfg.json, "json", false, jsonUsage)
	fs.StringVar(&cfg.keda.Target, "keda-target", "vllm", "KEDA: the Deployment to scale")
	fs.StringVar(&cfg.keda.Name, "keda-name", "", "KEDA: ScaledObject name (default tpot-<model>)")
	fs.StringVar(&cfg.keda.Namespace, "keda-namespace", "", "KEDA: namespace (default: none written)")
	fs.StringVar(&cfg.keda.PrometheusURL, "keda-prometheus", "http://prometheus.monitoring.svc:9090", "KEDA: Prometheus the trigger queries")
	fs.IntVar(&cfg.keda.MinReplicas, "keda-min-replicas", 1, "KEDA: minReplicaCount")
	fs.IntVar(&cfg.keda.MaxReplicas, "keda-max-replicas", 10, "KEDA: maxReplicaCount")
	fs.StringVar(&cfg.keda.Window, "keda-window", "2m", "KEDA: rate window of the TPOT query")
	sloFlags := bindSLOFlags(fs)
	cfg.targets.bind(fs)
	return func(positional []string) (sweepConfig, error) {
		cfg.kedaSet = map[string]bool{}
		fs.Visit(func(f *pflag.Flag) { cfg.kedaSet[f.Name] = true })
		cfg.sshTargets, _ = splitSSH(positional)
		cfg.find = len(positional) == 0 || len(cfg.sshTargets) == 1
		if len(positional) > 1 {
			return cfg, usagef("want one URL or ssh:// target (none: this machine's engine), got %d arguments", len(positional))
		}
		objs, err := sloFlags.Objectives()
		if err != nil {
			return cfg, usagef("%v", err)
		}
		s.Objectives = objs
		if err := req.validate(); err != nil {
			return cfg, err
		}
		ro, err := req.options()
		if err != nil {
			return cfg, err
		}
		*o = ro
		if !cfg.find {
			o.URL = withScheme(positional[0])
		}
		o.Limits = probe.Limits{MaxConcurrency: s.MaxConcurrency, MaxPerMinute: maxRPM}
		if cfg.keda.MinReplicas < 0 || cfg.keda.MaxReplicas < max(cfg.keda.MinReplicas, 1) {
			return cfg, usagef("KEDA replicas: want 0 ≤ --keda-min-replicas ≤ --keda-max-replicas, max ≥ 1")
		}
		if _, err := time.ParseDuration(cfg.keda.Window); err != nil {
			return cfg, usagef("--keda-window: %v", err)
		}
		prompt, err := loadProbePrompt(cfg.prompt, cfg.promptFile)
		if err != nil {
			return cfg, usagef("%v", err)
		}
		o.Prompt = prompt
		return cfg, nil
	}
}
