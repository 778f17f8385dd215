package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/sources/probe"
	"github.com/tokentop/tokentop/telemetry"
)

// probeSummary is the one-line description `tokentop help` shows.
const probeSummary = "send streaming requests to an LLM endpoint and report TTFT, TPOT, ITL, E2E"

func init() {
	register(command{name: "probe", summary: probeSummary, run: runProbe})
}

// probeConfig is what the flags say.
type probeConfig struct {
	opts       probe.Options
	n          int
	format     string // table, json, jsonl, csv
	prompt     string
	promptFile string
	bounds     slo.Bounds // goodput: per-request latency bounds
}

// runProbe runs `tokentop probe URL [flags]`. It returns an error when the
// arguments are wrong, when nothing could be probed, or when every request
// failed, so the exit code tells a script whether the endpoint answered.
func runProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseProbeArgs(args, stderr)
	if err != nil {
		return err
	}
	// Messages to stderr: a failed write there is reported with the result.
	var notes error
	note := func(format string, a ...any) {
		_, err := fmt.Fprintf(stderr, format, a...)
		notes = errors.Join(notes, err)
	}
	if cfg.opts.Auth.Insecure {
		note("WARNING: TLS certificate verification is OFF (--insecure): the endpoint is not authenticated\n")
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

func parseProbeArgs(args []string, stderr io.Writer) (probeConfig, error) {
	var cfg probeConfig
	o := &cfg.opts
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	out := &errorNoted{w: stderr}
	fs.SetOutput(out)
	var usageErr error
	fs.Usage = func() {
		if out.noted { // a usage error: main says it in one line
			out.noted = false
			return
		}
		_, err1 := fmt.Fprintf(stderr, "usage: tokentop probe URL [flags]\n\n%s.\nURL: server root (http://host:8000), the /v1 base, or a full endpoint path.\n\nflags:\n", probeSummary)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(out)
		_, err2 := fmt.Fprintf(stderr, "\n%s\n", probe.Definitions)
		usageErr = errors.Join(err1, err2)
	}
	var api string
	var jsonOut, jsonlOut, csvOut bool
	var maxRPM, maxConc int
	fs.StringVar(&o.Model, "model", "", "model to request (default: discovered from /v1/models)")
	fs.StringVar(&o.Name, "name", "", "endpoint name (default host:port/model)")
	fs.IntVar(&cfg.n, "n", 10, "number of requests")
	fs.IntVar(&o.Concurrency, "c", 1, "requests in flight at once")
	fs.IntVar(&o.MaxTokens, "max-tokens", probe.DefaultMaxTokens, "output tokens to ask for")
	fs.StringVar(&api, "api", "", "protocol: "+joinProbeAPIs()+" (default: from the URL path, else openai-chat)")
	fs.StringVar(&cfg.prompt, "prompt", "short", "built-in prompt (short, medium, long) or the prompt text")
	fs.StringVar(&cfg.promptFile, "prompt-file", "", "read the prompt from this file")
	fs.Float64Var(&o.Temperature, "temperature", 0, "sampling temperature")
	fs.Func("seed", "sampling seed sent with each request (default: none)", func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		o.Seed = &v
		return err
	})
	fs.DurationVar(&o.Timeout, "timeout", probe.DefaultTimeout, "per-request timeout")
	fs.DurationVar(&o.StallTimeout, "stall-timeout", probe.DefaultStallTimeout, "fail a request when no event arrives for this long")
	fs.DurationVar(&o.Interval, "interval", 0, "time between request starts (default: back to back)")
	fs.IntVar(&maxRPM, "max-rpm", probe.DefaultLimits().MaxPerMinute, "ceiling on requests per minute")
	fs.IntVar(&maxConc, "max-concurrency", probe.DefaultLimits().MaxConcurrency, "ceiling on -c")
	fs.IntVar(&o.MaxLineBytes, "max-line-bytes", probe.DefaultMaxLineBytes, "longest stream line accepted")
	fs.BoolVar(&o.HTTP2, "http2", false, "allow HTTP/2 (default HTTP/1.1: one connection per stream)")
	fs.BoolVar(&o.Prewarm, "prewarm", false, "open connections before the first request")
	fs.BoolVar(&o.NoUsage, "no-usage", false, "do not ask for a usage chunk (servers that reject stream_options)")
	fs.BoolVar(&o.IncludeMetrics, "include-metrics", false, "ask vLLM for its per-request timings (include_metrics; the server needs --enable-per-request-metrics): queue, prefill and decode join the breakdown")
	fs.StringVar(&o.Auth.TokenEnv, "api-key-env", "", "read the API key from this environment variable")
	fs.StringVar(&o.Auth.TokenFile, "api-key-file", "", "read the API key from this file (re-read per request)")
	fs.Func("header", "extra request header `Name: value` (repeatable)", func(s string) error {
		h, err := probe.ParseHeader(s)
		if err == nil {
			o.Headers = append(o.Headers, h)
		}
		return err
	})
	fs.StringVar(&o.Auth.CAFile, "ca-file", "", "PEM CA bundle to trust in addition to the system roots")
	fs.StringVar(&o.Auth.ServerName, "server-name", "", "TLS server name to verify")
	fs.BoolVar(&o.Auth.Insecure, "insecure", false, "do NOT verify the TLS certificate")
	// Goodput bounds, named as the other commands' objectives and with
	// their defaults, so probe and check judge a request alike.
	cfg.bounds = slo.BoundsFor(slo.DefaultObjectives(), "")
	for _, b := range []struct {
		sig  telemetry.Signal
		name string
	}{{telemetry.TTFT, "slo-ttft"}, {telemetry.TTFA, "slo-ttfa"}, {telemetry.TPOT, "slo-tpot"}, {telemetry.E2E, "slo-e2e"}} {
		def := "0 = none"
		if v, ok := cfg.bounds[b.sig]; ok {
			def = "default " + slo.FormatValue(b.sig, v)
		}
		fs.Func(b.name, "goodput: a request is good only if its "+b.sig.Info().Title+" is at or below this ("+def+")", func(s string) error {
			d, err := slo.ParseDuration(s)
			if err != nil || d < 0 {
				return fmt.Errorf("invalid bound %q (use e.g. 500ms, 5s; 0 = none)", s)
			}
			if d == 0 {
				delete(cfg.bounds, b.sig)
			} else {
				cfg.bounds[b.sig] = d.Seconds()
			}
			return nil
		})
	}
	fs.BoolVar(&jsonOut, "json", false, "print one JSON summary document (with every request)")
	fs.BoolVar(&jsonlOut, "jsonl", false, "print one JSON object per request, then a summary object")
	fs.BoolVar(&csvOut, "csv", false, "print one CSV row per request")

	// Flags may follow the URL: parse, take one positional, parse again.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return cfg, errors.Join(err, usageErr)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fs.Usage()
		return cfg, errors.Join(fmt.Errorf("want exactly one URL, got %d arguments", len(positional)), usageErr)
	}
	o.URL = positional[0]
	o.API = probe.API(api)
	o.Limits = probe.Limits{MaxConcurrency: maxConc, MaxPerMinute: maxRPM}
	if cfg.n < 1 {
		return cfg, errors.New("-n must be at least 1")
	}
	if o.Auth.TokenEnv != "" && o.Auth.TokenFile != "" {
		return cfg, errors.New("give --api-key-env or --api-key-file, not both")
	}
	if countTrue(jsonOut, jsonlOut, csvOut) > 1 {
		return cfg, errors.New("choose one of --json, --jsonl, --csv")
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
	prompt, err := loadProbePrompt(cfg.prompt, cfg.promptFile)
	if err != nil {
		return cfg, err
	}
	o.Prompt = prompt
	return cfg, nil
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
