package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
)

// probeSummary is the one-line description `ttftop help` shows.
const probeSummary = "send streaming requests to an LLM endpoint and report TTFT, TPOT, ITL, E2E"

func probeCommand() command {
	return command{name: "probe", summary: probeSummary, usage: probeUsage, bind: parsed(parseProbeArgs, runProbe), renamed: probeRenamed()}
}

// probeConfig is what the flags say.
type probeConfig struct {
	opts       probe.Options
	n          int
	format     string // table, json, jsonl, csv
	prompt     string
	promptFile string
	bounds     slo.Bounds // goodput: per-request latency bounds
	urls       []string   // more than one: an A/B comparison
	confidence float64    // A/B: level of the intervals, 0.95 = 95 %
	targets    targetFlags
	find       bool     // no URL, or ssh:// targets: find the endpoint
	sshTargets []string // where to find it; none: this machine
}

// runProbe runs `ttftop probe URL [flags]` as cfg says. It returns an error when the
// arguments are wrong, when nothing could be probed, or when every request
// failed, so the exit code tells a script whether the endpoint answered.
func runProbe(ctx context.Context, cfg probeConfig, stdout, stderr io.Writer) (err error) {
	// Messages to stderr: a failed write there is reported with the result.
	var notes error
	note := func(format string, a ...any) {
		_, err := fmt.Fprintf(stderr, format, a...)
		notes = errors.Join(notes, err)
	}
	if cfg.opts.Auth.Insecure {
		note("WARNING: TLS certificate verification is OFF (--insecure): the endpoint is not authenticated\n")
	}
	if cfg.find {
		defer func() { notes = errors.Join(notes, cfg.targets.close()) }()
		if cfg.opts, err = cfg.targets.findOne(cfg.opts, cfg.sshTargets, stderr); err != nil {
			return err
		}
	}
	if len(cfg.urls) > 1 {
		return errors.Join(runProbeAB(ctx, cfg, stdout, note), notes)
	}
	p, err := probe.New(cfg.opts)
	if err != nil {
		return err
	}
	defer p.Close()

	dctx, cancel := context.WithTimeout(ctx, p.Options().Timeout)
	models, err := p.Discover(dctx)
	cancel()
	if err != nil {
		return err
	}
	if cfg.opts.Model == "" && len(models) > 1 {
		ids := make([]string, len(models))
		for i, m := range models {
			ids[i] = m.ID
		}
		// The first is what vLLM lists as its base model (adapters follow);
		// say so rather than guess silently.
		note("found %d models (%s); probing %s; choose with --model\n", len(models), strings.Join(ids, ", "), p.Model())
	}
	if p.Options().Prewarm {
		if err := p.Prewarm(ctx, p.Options().Concurrency); err != nil {
			note("prewarm: %v\n", err)
		}
	}

	out := newProbeReport(p, cfg, stdout)
	var mu sync.Mutex
	var werr error
	start := time.Now()
	p.DoScheduled(ctx, cfg.n, func(r *probe.Result) {
		mu.Lock()
		defer mu.Unlock()
		werr = errors.Join(werr, out.add(r))
	})
	out.duration = time.Since(start)
	if err := errors.Join(werr, out.finish(), notes); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if out.completed == 0 {
		return fmt.Errorf("all %d requests failed", len(out.results))
	}
	return nil
}

// probeRenamed are probe's flags that moved so that one name means one
// thing in every command.
func probeRenamed() renamedFlags {
	return renamedFlags{
		"seed":     "--sample-seed (the sampling seed sent with each request; --seed is the simulator's, in sim, demo and serve)",
		"interval": "--request-interval (time between request starts here; --interval is the time between probes of one endpoint in the monitoring commands)",
	}
}

const probeUsage = `ttftop probe URL [flags]
       ttftop probe URL1 URL2 [URL...] [flags]      (A/B: compare endpoints)
       ttftop probe [ssh://[user@]host[:port]] [flags]

` + probeSummary + `.
URL: server root (http://host:8000), the /v1 base, or a full endpoint path.
With no URL, the LLM server found on this machine (--discover-ports,
--no-discover); with an ssh:// target, the one found on that host, probed
through the SSH connection (TTFT and E2E include the tunnel). With several
found, the first is probed and the others named on stderr. --json says
how it was found (found, via). See docs/discovery.md.

With one URL: -n requests (-c at once), then a table of every request and
mean/median/p90/p95/p99 of TTFT, TTFA, TPOT, ITL and E2E; --json one
document (the summary with every request), --jsonl one object per request
then the summary, --csv one row per request.

With several URLs (A/B): -n rounds; each round sends the same prompt to
every endpoint, one request at a time, in an order that rotates every
round, so drift in time and the order's own effect fall on each endpoint
alike. The first URL is the baseline; for each other endpoint it reports
the difference (endpoint − baseline) of TTFT, TPOT and E2E p50 and p95 and
of the median decode tok/s, with a confidence interval (--confidence, 95%
by default): a paired percentile bootstrap over rounds (2000 resamples of
the rounds in which both requests succeeded, fixed seed). An interval that
excludes 0 is a difference the run supports; one that holds 0 is not.
--model applies to every URL.

` + probe.Definitions

func parseProbeArgs(fs *pflag.FlagSet) func(positional []string) (probeConfig, error) {
	var cfg probeConfig
	o := &cfg.opts
	var req requestFlags
	req.bind(fs)
	var jsonOut, jsonlOut, csvOut bool
	var maxRPM, maxConc int
	fs.StringVar(&o.Name, "name", "", "endpoint name (default host:port/model)")
	letterVar(fs, &cfg.n, "n", defaultRequests, nUsage)
	letterVar(fs, &o.Concurrency, "c", probe.DefaultConcurrency, "requests in flight at once (one URL only)")
	fs.StringVar(&cfg.prompt, "prompt", probe.DefaultPrompt, "built-in prompt (short, medium, long) or the prompt text")
	fs.StringVar(&cfg.promptFile, "prompt-file", "", "read the prompt from this file")
	fs.Float64Var(&o.Temperature, "temperature", 0, "sampling temperature")
	fs.Func("sample-seed", "sampling seed sent with each request (default: none)", func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		o.Seed = &v
		return err
	})
	durationVar(fs, &o.StallTimeout, "stall-timeout", probe.DefaultStallTimeout, "fail a request when no event arrives for this long")
	durationVar(fs, &o.Interval, "request-interval", 0, "time between request starts (0 = back to back)")
	fs.IntVar(&maxRPM, "max-rpm", probe.DefaultLimits().MaxPerMinute, maxRPMUsage)
	fs.IntVar(&maxConc, "max-concurrency", probe.DefaultLimits().MaxConcurrency, maxConcurrencyUsage)
	fs.IntVar(&o.MaxLineBytes, "max-line-bytes", probe.DefaultMaxLineBytes, "longest stream line accepted")
	fs.BoolVar(&o.HTTP2, "http2", false, "allow HTTP/2 (default HTTP/1.1: one connection per stream)")
	fs.BoolVar(&o.Prewarm, "prewarm", false, "open connections before the first request")
	fs.BoolVar(&o.IncludeMetrics, "include-metrics", false, "ask vLLM for its per-request timings (include_metrics; the server needs --enable-per-request-metrics): queue, prefill and decode join the breakdown")
	fs.StringVar(&o.Auth.ServerName, "server-name", "", "TLS server name to verify")
	// Goodput bounds: the other commands' latency objectives, with their
	// names and defaults, so probe and check judge a request alike.
	bounds := newSLOFlags()
	bounds.bindLatency(fs)
	fs.Func("confidence", "A/B: confidence level of the difference intervals, in percent (default 95)", func(s string) error {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		if err != nil || !(v >= 50 && v < 100) {
			return fmt.Errorf("want a percentage from 50 to below 100, e.g. 95 or 99")
		}
		cfg.confidence = v / 100
		return nil
	})
	cfg.confidence = 0.95
	fs.BoolVar(&jsonOut, "json", false, jsonUsage)
	fs.BoolVar(&jsonlOut, "jsonl", false, "one JSON object per request, then a summary object (one URL only)")
	fs.BoolVar(&csvOut, "csv", false, "one CSV row per request (one URL only)")
	cfg.targets.bind(fs)
	return func(positional []string) (probeConfig, error) {
		sshTargets, _ := splitSSH(positional)
		if cfg.find = len(positional) == 0 || len(sshTargets) > 0; cfg.find && len(positional) > len(sshTargets) {
			return cfg, usagef("probe takes URLs (several for an A/B comparison) or ssh:// targets, not both")
		}
		if err := req.validate(); err != nil {
			return cfg, err
		}
		base, err := req.options()
		if err != nil {
			return cfg, err
		}
		base.Temperature, base.Seed, base.Name, base.Concurrency = o.Temperature, o.Seed, o.Name, o.Concurrency
		base.StallTimeout, base.Interval, base.MaxLineBytes = o.StallTimeout, o.Interval, o.MaxLineBytes
		base.HTTP2, base.Prewarm, base.IncludeMetrics = o.HTTP2, o.Prewarm, o.IncludeMetrics
		base.Auth.ServerName = o.Auth.ServerName
		*o = base
		if cfg.sshTargets = sshTargets; !cfg.find {
			for _, u := range positional {
				cfg.urls = append(cfg.urls, withScheme(u))
			}
			o.URL = cfg.urls[0]
		}
		o.Limits = probe.Limits{MaxConcurrency: maxConc, MaxPerMinute: maxRPM}
		objs, err := bounds.Objectives()
		if err != nil {
			return cfg, usageError{msg: err.Error()}
		}
		cfg.bounds = slo.BoundsFor(objs, "")
		if cfg.n < 1 {
			return cfg, usagef("-n must be at least 1")
		}
		if countTrue(jsonOut, jsonlOut, csvOut) > 1 {
			return cfg, usagef("choose one of --json, --jsonl, --csv")
		}
		switch {
		case jsonOut:
			cfg.format = "json"
		case jsonlOut:
			cfg.format = "jsonl"
		case csvOut:
			cfg.format = "csv"
		default:
			cfg.format = "table"
		}
		if len(cfg.urls) > 1 {
			if o.Concurrency != 1 {
				return cfg, usagef("an A/B comparison sends one request at a time: -c must be 1")
			}
			if cfg.format == "jsonl" || cfg.format == "csv" {
				return cfg, usagef("an A/B comparison prints a table or --json")
			}
			if o.Name != "" {
				return cfg, usagef("--name names one endpoint: not with several URLs")
			}
		}
		prompt, err := loadProbePrompt(cfg.prompt, cfg.promptFile)
		if err != nil {
			return cfg, usageError{msg: err.Error()}
		}
		o.Prompt = prompt
		return cfg, nil
	}
}

func loadProbePrompt(name, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("reading the prompt: %w", err)
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			return "", errors.New("the prompt file is empty")
		}
		return string(b), nil
	}
	if p, ok := probe.BuiltinPrompts()[name]; ok {
		return p, nil
	}
	if strings.TrimSpace(name) == "" {
		return "", errors.New("empty prompt")
	}
	return name, nil
}

func joinProbeAPIs() string {
	s := make([]string, 0, len(probe.APIs()))
	for _, a := range probe.APIs() {
		s = append(s, string(a))
	}
	return strings.Join(s, "|")
}

func countTrue(b ...bool) int {
	return len(slices.DeleteFunc(b, func(v bool) bool { return !v }))
}
