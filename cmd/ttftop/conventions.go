package main

// The command line's conventions live here, once, so every subcommand
// binds the same flag with the same name, meaning, default and help text
// (conventions_test.go fails when one drifts): durations print as people
// write them (5m, not 5m0s), usage errors exit 2 in one line, --json has
// one meaning, and the request flags are the same wherever a request is
// made.

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/tui"
)

// usageError is a wrong command line: main says it in one line with a
// pointer to --help and exits 2; flagError makes pflag's errors one.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{msg: fmt.Sprintf(format, a...)} }

// jsonUsage is the one meaning of --json, in every command that has it.
const jsonUsage = "machine-readable output on stdout: one JSON document for a command that finishes, one JSON object per line for one that streams (durations in ms, fields named *_ms)"

// defaultRequests is -n wherever requests are counted (probe, check).
const defaultRequests = 20

// maxConcurrencyUsage and maxRPMUsage are the safety ceilings of the
// commands that send load (probe's -c, sweep's steps).
var maxConcurrencyUsage = fmt.Sprintf("ceiling on requests in flight: probe's -c, sweep's last step (at most %d)", probe.AbsoluteMaxConcurrency)

const maxRPMUsage = "ceiling on requests started per minute (a throttled sweep step shows achieved concurrency below its own)"

// nUsage is -n's help, the same in probe and check.
const nUsage = "requests per endpoint (and per model)"

// durationFlag is a time.Duration flag that prints its value as
// Prometheus does (1m, 5m, 1h30m), never Go's 1m0s. It takes Go
// durations (1m30s, -1s) and Prometheus ones (28d, 1w).
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil || *f.d == 0 {
		return "" // flag's help then shows no default: the usage says what 0 means
	}
	return slo.FormatDuration(*f.d)
}

// Type is the value's name in --help: --timeout duration.
func (durationFlag) Type() string { return "duration" }

func (f durationFlag) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil {
		*f.d = d
		return nil
	}
	d, err := slo.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q (use e.g. 500ms, 10s, 5m, 1h, 28d)", s)
	}
	*f.d = d
	return nil
}

// letterVar binds an int flag whose only name is one letter (-n, -c).
func letterVar(fs *pflag.FlagSet, p *int, letter string, def int, usage string) {
	fs.IntVarP(p, letter, letter, def, usage)
}

// durationVar binds a duration flag with def as its default.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(durationFlag{p}, name, usage)
}

// renamedFlags maps an old flag name to its new one and why it moved; a
// command line with the old name gets a usage error that says so
// (flagError).
type renamedFlags map[string]string

// requestFlags are the flags of every command that sends requests to an
// endpoint: probe, check, and the monitoring commands' probes.
type requestFlags struct {
	api        string
	model      string
	maxTokens  int
	timeout    time.Duration
	apiKeyEnv  string
	apiKeyFile string
	caFile     string
	insecure   bool
	headers    listFlag
	noUsage    bool
}

func (r *requestFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&r.api, "api", "", "probe protocol: "+joinProbeAPIs()+" (default: from the URL path, else openai-chat)")
	fs.StringVar(&r.model, "model", "", "model to request (default: discovered from /v1/models)")
	fs.IntVar(&r.maxTokens, "max-tokens", probe.DefaultMaxTokens, "output tokens to ask for per request")
	durationVar(fs, &r.timeout, "timeout", probe.DefaultTimeout, "per-request timeout")
	fs.StringVar(&r.apiKeyEnv, "api-key-env", "", "read the API key from this environment variable")
	fs.StringVar(&r.apiKeyFile, "api-key-file", "", "read the API key from this file (re-read per request)")
	fs.StringVar(&r.caFile, "ca-file", "", "PEM CA bundle to trust in addition to the system roots")
	fs.BoolVar(&r.insecure, "insecure", false, "DANGEROUS: do not verify the TLS certificate")
	fs.Var(&r.headers, "header", "extra request header `Name: value` (repeatable)")
	fs.BoolVar(&r.noUsage, "no-usage", false, "do not ask for a usage chunk (servers that reject stream_options)")
}

// validate refuses what no command accepts.
func (r *requestFlags) validate() error {
	if r.apiKeyEnv != "" && r.apiKeyFile != "" {
		return usagef("give --api-key-env or --api-key-file, not both")
	}
	if r.maxTokens < 1 {
		return usagef("--max-tokens must be at least 1")
	}
	if r.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	for _, h := range r.headers {
		if _, err := probe.ParseHeader(h); err != nil {
			return usagef("--header %q: %v", h, err)
		}
	}
	return nil
}

// options are the flags as probe options (URL unset).
func (r *requestFlags) options() (probe.Options, error) {
	o := probe.Options{API: probe.API(r.api), Model: r.model, MaxTokens: r.maxTokens, Timeout: r.timeout,
		NoUsage: r.noUsage, Auth: probe.Auth{TokenEnv: r.apiKeyEnv, TokenFile: r.apiKeyFile, CAFile: r.caFile, Insecure: r.insecure}}
	for _, s := range r.headers {
		h, err := probe.ParseHeader(s)
		if err != nil {
			return o, usagef("--header %q: %v", s, err)
		}
		o.Headers = append(o.Headers, h)
	}
	return o, nil
}

// headerMap is --header as the config file's headers.
func (r *requestFlags) headerMap() (map[string]string, error) {
	if len(r.headers) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, s := range r.headers {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usagef("--header %q: want 'Name: value'", s)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

// configUsage is --config's help wherever a config file is read.
const configUsage = "YAML config file: endpoints, objectives, notifications (default $XDG_CONFIG_HOME/ttftop/config.yaml when present)"

// simSeedUsage is the simulator's --seed (sim, demo, serve --demo).
const simSeedUsage = "simulator seed: step jitter, answer lengths and text (sim, demo, serve --demo)"

// demoUsage is --demo's help in sim and serve.
const demoFlagUsage = "use the demo setup: the simulator's healthy, degrading (30-75 s), bursty and reasoning (DeepSeek-R1-Distill) models"

// pdFlagUsage is --pd's help in demo and sim.
const pdFlagUsage = "a disaggregated model: prefill and decode workers behind the llm-d router (demo: beside its models; sim: alone, --prefill and --decode workers; docs/disaggregated.md)"

// bindWindow adds --window, the quantile window of every read-out.
func bindWindow(fs *pflag.FlagSet, p *time.Duration) {
	durationVar(fs, p, "window", tui.DefaultWindow, "quantile window of the figures shown: 1m, 5m, 15m, 1h")
}
