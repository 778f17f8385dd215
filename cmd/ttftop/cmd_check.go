package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

func checkCommand() command {
	return command{name: "check", summary: "measure once, judge the SLOs, exit 0 pass / 1 fail / 2 not measured (CI)", usage: checkUsage, bind: runCheck}
}

const checkUsage = `ttftop check URL [URL...] [flags]
       ttftop check [ssh://[user@]host[:port]...] [flags]
       ttftop check --config FILE [flags]

With no URL and no config file, checks the LLM servers found on this
machine; with ssh:// targets, those found on each host, measured through
its SSH connection (docs/discovery.md). --json's "found" says how each
was found.

Sends -n streaming requests to each endpoint (without --model, to every
model the server lists on /v1/models, one after the other), then judges
every objective once (no 'for' wait) on what was measured, and prints one
line per model and objective. A percentile, error-rate or availability
objective is judged over the whole run, whatever its window, and its
promise says so: "TTFT p95 ≤ 5s over 7s" for a 7-second check.

Exit status: 0 every objective passed on every model; 1 at least one
failed; 2 nothing failed but something could not be measured, or the
arguments were wrong. A failure beats not measured (1 over 2): a known
breach is the stronger news, and whatever was not measured is still
listed (N/A) and said on stderr.

--webhook and --on-alert are told of each objective that failed, as a
firing alert (a webhook's ends 4 minutes later unless re-sent); delivery
gets 5 s, retries included, and failures are said on stderr. They never
change the exit status: a check notifies only when it already exits 1.

--json prints one document: {"pass", "exit_code", "results": [...],
"goodput": [...]}; a latency objective's figures are value_ms and
threshold_ms, a ratio's value and threshold (fractions). The figures are
defined in 'ttftop probe --help' and docs/definitions.md.`

// measurer runs one measurement and feeds what it sees into sink. It
// returns an error only when it could not measure at all (the endpoint
// cannot be reached or named); failed requests are data, not errors.
type measurer func(ctx context.Context, sink telemetry.Sink) error

// checkTarget is one thing to measure.
type checkTarget struct {
	label   string // for messages: the URL
	measure measurer
	err     error           // why it could not be measured at all
	found   config.Endpoint // how discovery found it, when it did
}

// checkReport is the check's verdict; `check --json` prints it as
// checkReportJSON.
type checkReport struct {
	Pass     bool         `json:"pass"`
	ExitCode int          `json:"exit_code"`
	Results  []slo.Result `json:"results"`
	Errors   []string     `json:"errors,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
	// Interrupted: the user stopped the check; it judged what was
	// measured until then.
	Interrupted bool `json:"interrupted,omitempty"`
	// Goodput per probed endpoint: the share of requests meeting every
	// latency objective, and good tokens/s.
	Goodput []probe.Goodput `json:"goodput,omitempty"`
	// Found: how each discovered endpoint was found.
	Found []checkFound `json:"found,omitempty"`
}

// checkFound says how a discovered endpoint (the results' endpoints that
// begin with Endpoint) was found, and the tunnel it was measured through.
type checkFound struct {
	Endpoint string `json:"endpoint"`
	Found    string `json:"found"`
	Via      string `json:"via,omitempty"`
}

// foundOf are the discovered targets' checkFound.
func foundOf(targets []checkTarget) []checkFound {
	var out []checkFound
	for _, t := range targets {
		if labels := t.found.FoundLabels(); labels != nil {
			out = append(out, checkFound{Endpoint: t.label, Found: labels[config.LabelFound], Via: labels[config.LabelVia]})
		}
	}
	return out
}

// checkReportJSON is what `check --json` prints: the report with every
// number named for its unit (docs/json.md).
type checkReportJSON struct {
	Schema      string           `json:"schema"`
	Pass        bool             `json:"pass"`
	ExitCode    int              `json:"exit_code"`
	Results     []map[string]any `json:"results"` // slo.ResultJSON
	Errors      []string         `json:"errors,omitempty"`
	Warnings    []string         `json:"warnings,omitempty"`
	Interrupted bool             `json:"interrupted,omitempty"`
	Goodput     []probe.Goodput  `json:"goodput,omitempty"`
	Found       []checkFound     `json:"found,omitempty"`
}

func (rep checkReport) json() (checkReportJSON, error) {
	out := checkReportJSON{Schema: telemetry.JSONSchema, Pass: rep.Pass, ExitCode: rep.ExitCode, Errors: rep.Errors, Warnings: rep.Warnings,
		Interrupted: rep.Interrupted, Goodput: rep.Goodput, Found: rep.Found, Results: make([]map[string]any, len(rep.Results))}
	for i, r := range rep.Results {
		m, err := slo.ResultJSON(r)
		if err != nil {
			return out, err
		}
		out.Results[i] = m
	}
	return out, nil
}

func runCheck(fs *pflag.FlagSet) runFunc {
	sloFlags := bindSLOFlags(fs)
	n := fs.IntP("n", "n", defaultRequests, nUsage)
	jsonOut := fs.Bool("json", false, jsonUsage)
	configPath := fs.String("config", "", configUsage)
	var req requestFlags
	req.bind(fs)
	var nf notifyFlags
	nf.bind(fs)
	var tf targetFlags
	tf.bind(fs)
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
		sshTargets, urls := splitSSH(args)
		if *n < 1 {
			return usagef("-n must be at least 1")
		}
		if err := req.validate(); err != nil {
			return err
		}
		po, err := req.options()
		if err != nil {
			return err
		}
		var targets []checkTarget
		for _, u := range urls {
			o := po
			o.URL = withScheme(u)
			targets = append(targets, checkTarget{label: u, measure: probeMeasurer(o, "", *n)})
		}
		base := slo.DefaultObjectives()
		var notifyCfg config.Notify
		path := *configPath
		if path == "" && len(args) == 0 {
			path = existingDefaultConfig()
		}
		var found []config.Endpoint
		if len(sshTargets) > 0 || (path == "" && len(args) == 0) {
			defer func() { err = errors.Join(err, tf.close()) }()
			if found, err = tf.find(sshTargets, stderr); err != nil {
				return err
			}
		}
		for _, ep := range found {
			o := foundProbe(po, ep)
			targets = append(targets, checkTarget{label: ep.Prefix(), measure: probeMeasurer(o, ep.Name, *n), found: ep})
		}
		if path != "" {
			cfg, err := checkConfig(path, *n)
			if err != nil {
				return exitError{code: 2, err: err}
			}
			targets = append(targets, cfg.targets...)
			if len(cfg.objectives) > 0 {
				base = cfg.objectives
			}
			notifyCfg = cfg.notify
		}
		nf.apply(&notifyCfg)
		if len(targets) == 0 {
			return usagef("give at least one URL, ssh://[user@]host[:port] or --config FILE")
		}
		objs, err := sloFlags.Apply(base)
		if err != nil {
			return usageError{msg: err.Error()}
		}
		// Started before measuring, so a hook that does not exist fails now.
		nt, err := monitor.StartNotifications(notifyCfg, nil, monitor.NotifyOptions{Log: stderr})
		if err != nil {
			return exitError{code: 2, err: err}
		}
		rep := check(ctx, targets, objs, sloFlags.Options())
		rep.Found = foundOf(targets)
		now := time.Now()
		nt.Notify(now, failedTransitions(rep.Results, objs, now))
		if err := stopNotifications(nt); err != nil {
			fmt.Fprintf(stderr, "ttftop check: %v\n", err)
		}
		if *jsonOut {
			doc, err := rep.json()
			if err != nil {
				return exitError{code: 2, err: err}
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(doc); err != nil {
				return exitError{code: 2, err: err}
			}
		} else if err := printCheck(stdout, stderr, rep); err != nil {
			return exitError{code: 2, err: err}
		}
		switch rep.ExitCode {
		case 0:
			return nil
		case 1:
			return exitError{code: 1}
		}
		if rep.Interrupted {
			return exitError{code: 2, err: errors.New("check: interrupted before every request was sent")}
		}
		return exitError{code: 2, err: errors.New("check: some objectives could not be measured")}
	}
}

// check measures every target in turn, then judges the objectives once.
// Percentile, error-rate and availability windows are the whole
// measurement: a check judges all it measured, however long that took,
// and says so.
func check(ctx context.Context, targets []checkTarget, objs []slo.Objective, opts slo.Options) checkReport {
	store := telemetry.NewStore(telemetry.StoreConfig{})
	rec := &recorder{}
	goodput := probe.NewGoodputSink(objs)
	sink := telemetry.Tee{store, rec, goodput}
	var rep checkReport
	start := time.Now()
	var unreached []checkTarget
	for _, t := range targets {
		if err := t.measure(ctx, sink); err != nil && ctx.Err() == nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", t.label, err))
			unreached = append(unreached, checkTarget{label: t.label, err: err})
		}
	}
	// Stopped by the user (Ctrl-C, SIGTERM): what was measured before is
	// judged, the request in flight counts nowhere, and the summary says so.
	rep.Interrupted = ctx.Err() != nil
	now := time.Now()
	// The run, rounded up to the second: what the window judged and what
	// the promise says (a 7-second check is "over 7s", not "over 5m").
	span := max((now.Sub(start) + time.Second - 1).Truncate(time.Second), time.Second)
	widened := make([]slo.Objective, len(objs))
	for i, o := range objs {
		if o.Kind != slo.Ratio {
			o.Window = span
		}
		widened[i] = o
	}
	eng := slo.New(widened, store, opts)
	for _, o := range rec.take() {
		eng.Observe(o)
	}
	rep.Warnings = eng.Warnings()
	rep.Results = eng.Check(now)
	for _, t := range unreached {
		rep.Results = append(rep.Results, notMeasured(t, eng.Objectives())...)
	}
	rep.Goodput = goodput.Results()
	failed, unmeasured := 0, 0
	for i, r := range rep.Results {
		switch {
		case !r.Measured:
			rep.Results[i].Reason = whyUnmeasured(store, r)
			unmeasured++
		case !r.Pass:
			failed++
		}
	}
	switch {
	case failed > 0:
		rep.ExitCode = 1
	case unmeasured > 0 || len(rep.Results) == 0 || len(rep.Errors) > 0 || rep.Interrupted:
		rep.ExitCode = 2
	}
	rep.Pass = rep.ExitCode == 0
	return rep
}

// notMeasured is one N/A row per objective that applies to a target that
// could not be measured at all: its endpoints were never named, so the
// engine judged nothing there, and the summary must still count what was
// left unjudged (never "0 not measured" beside "could not measure").
func notMeasured(t checkTarget, objs []slo.Objective) []slo.Result {
	var out []slo.Result
	for _, o := range objs {
		if o.Endpoint != "" && o.Endpoint != "*" && !o.Matches(t.label) {
			continue // names one endpoint: not this target's, as far as can be known
		}
		if o.Kind == slo.TargetUp {
			continue // judges scrape targets: check only probes, so it never applies
		}
		r := slo.Result{Objective: o.Name, Description: o.String(), Endpoint: t.label, Kind: o.Kind,
			Signal: o.Signal, Threshold: o.Threshold, Data: telemetry.Unknown, Reason: t.err.Error()}
		if o.Kind == slo.Ratio {
			r.Threshold = o.Target
		}
		out = append(out, r)
	}
	return out
}

// whyUnmeasured names the cause of missing latencies: when every request
// failed, there is no latency to judge, and the failure says why.
func whyUnmeasured(store *telemetry.Store, r slo.Result) string {
	probes := store.Probes(r.Endpoint)
	failed, last := 0, ""
	for _, p := range probes {
		if !p.OK {
			failed++
			last = p.Error
			if p.ErrorKind != "" {
				last = p.ErrorKind + ": " + p.Error
			}
		}
	}
	if len(probes) > 0 && failed == len(probes) {
		return fmt.Sprintf("every request failed (%s)", last)
	}
	return r.Reason
}

// recorder keeps the observations the engine needs, to replay them once
// the objectives' windows are known.
type recorder struct {
	mu  sync.Mutex
	obs []telemetry.Observation
}

func (r *recorder) Observe(o telemetry.Observation) {
	switch o.Kind {
	case telemetry.KindSample, telemetry.KindHistogram, telemetry.KindFailure, telemetry.KindNoData, telemetry.KindEndpoint:
		r.mu.Lock()
		r.obs = append(r.obs, o)
		r.mu.Unlock()
	}
}

func (r *recorder) take() []telemetry.Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.obs
	r.obs = nil
	return out
}

func printCheck(stdout, stderr io.Writer, rep checkReport) error {
	for _, e := range rep.Errors {
		fmt.Fprintf(stderr, "ttftop check: could not measure %s\n", e)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "ttftop check: warning: %s\n", w)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tOBJECTIVE\tENDPOINT\tMEASURED\tPROMISE")
	counts := map[string]int{}
	for _, r := range rep.Results {
		verdict, measured := "N/A", "not measured: "+r.Reason
		if r.Measured {
			verdict, measured = "FAIL", measuredText(r)
			if r.Pass {
				verdict = "PASS"
			}
		}
		counts[verdict]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", verdict, r.Objective, r.Endpoint, measured, r.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	interrupted := ""
	if rep.Interrupted {
		interrupted = " (interrupted: judged on what was measured until then)"
	}
	if _, err := fmt.Fprintf(stdout, "%d passed, %d failed, %d not measured%s\n", counts["PASS"], counts["FAIL"], counts["N/A"], interrupted); err != nil {
		return err
	}
	for _, g := range rep.Goodput {
		if _, err := fmt.Fprintf(stdout, "%s: %s\n", g.Endpoint, g.Text()); err != nil {
			return err
		}
	}
	return nil
}

func measuredText(r slo.Result) string {
	v := *r.Value
	var s string
	switch r.Kind {
	case slo.Ratio:
		s = slo.FormatRatio(v) + " good"
	case slo.ErrorRate:
		s = slo.FormatRatio(v)
	default:
		// Three significant digits, as the dashboard and report print a
		// measured figure (248ms, not 248.304ms).
		info := r.Signal.Info()
		s = figures.Value(v*info.Scale, info.Unit)
	}
	if r.Approx {
		s = "≈" + s
	}
	unit := "samples"
	if r.Kind != slo.Percentile {
		unit = "requests"
	}
	return fmt.Sprintf("%s (%g %s)", s, r.Count, unit)
}

// probeMeasurer sends n requests, one after the other, to one endpoint:
// to its model, or without one to every model the server lists, in turn.
// prefix is the config's name ("<name>/<model>", as the dashboard keys
// it).
func probeMeasurer(opts probe.Options, prefix string, n int) measurer {
	return func(ctx context.Context, sink telemetry.Sink) error {
		models := listModels(ctx, opts)
		if len(models) <= 1 {
			return probe.Measure(ctx, opts, prefix, n, sink)
		}
		var errs []error
		for _, model := range models {
			o := opts
			o.Model = model
			if err := probe.Measure(ctx, o, prefix, n, sink); err != nil {
				errs = append(errs, fmt.Errorf("model %s: %w", model, err))
			}
			if ctx.Err() != nil {
				break
			}
		}
		return errors.Join(errs...)
	}
}

// listModels is what the server lists on /v1/models when no model is
// given; nil when a model is given or the listing fails (probe.Measure
// then discovers again and says why it cannot measure).
func listModels(ctx context.Context, opts probe.Options) []string {
	if opts.Model != "" {
		return nil
	}
	p, err := probe.New(opts)
	if err != nil {
		return nil
	}
	defer p.Close()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = probe.DefaultTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	listed, err := p.Discover(dctx)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(listed))
	for _, m := range listed {
		names = append(names, m.ID)
	}
	return names
}

// failedTransitions are the failed results as alerts that start firing
// now, for the notifiers. A ratio objective's figure becomes its burn
// rate over the check (threshold 1×: the budget spent exactly as fast as
// the period allows).
func failedTransitions(results []slo.Result, objs []slo.Objective, now time.Time) []slo.Transition {
	severity := map[string]string{}
	for _, o := range objs {
		severity[o.Name] = cmp.Or(o.Severity, slo.DefaultSeverity)
	}
	var trs []slo.Transition
	for _, r := range results {
		if !r.Measured || r.Pass {
			continue
		}
		a := slo.Alert{Objective: r.Objective, Endpoint: r.Endpoint, Kind: r.Kind, Signal: r.Signal, State: slo.Firing,
			ActiveAt: now, FiredAt: now, Value: *r.Value, Threshold: r.Threshold, Peak: *r.Value, Approx: r.Approx,
			Description: r.Description, Severity: severity[r.Objective], Data: r.Data, Count: r.Count, Source: r.Source,
			EvaluatedAt: now}
		if r.Kind == slo.Ratio && r.Threshold < 1 {
			a.Value = (1 - *r.Value) / (1 - r.Threshold)
			a.Threshold, a.Peak = 1, a.Value
		}
		trs = append(trs, slo.Transition{At: now, From: slo.Inactive, To: slo.Firing, Alert: a})
	}
	return trs
}

// checkConfigured is what a check takes from a config file.
type checkConfigured struct {
	targets    []checkTarget
	objectives []slo.Objective
	notify     config.Notify
}

// checkConfig is the --config hook: endpoints to probe, objectives and
// notifications from the config file. Probe settings and auth come from
// each endpoint's probe section (secrets by env var or file only).
func checkConfig(path string, n int) (checkConfigured, error) {
	c, err := config.Load(path)
	if err != nil {
		return checkConfigured{}, err
	}
	out := checkConfigured{notify: c.Notify}
	for _, ep := range c.Endpoints {
		o, err := ep.ProbeOptions()
		if err != nil {
			return checkConfigured{}, err
		}
		out.targets = append(out.targets, checkTarget{label: ep.Prefix(), measure: probeMeasurer(o, ep.Name, n)})
	}
	out.objectives, err = config.Objectives(c.SLOs)
	return out, err
}
