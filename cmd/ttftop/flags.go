package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
)

// sourceFlags are the flags every monitoring command shares: where data
// comes from, how probes behave, and the SLOs.
type sourceFlags struct {
	configPath  string
	prometheus  listFlag
	groupBy     string
	dcgm        listFlag
	scrape      listFlag
	nvidiaSMI   bool
	req         requestFlags
	interval    time.Duration
	noProbe     bool
	notify      notifyFlags
	slo         *sloFlags
	noSLO       bool
	noScrape    bool
	record      string
	fromDefault bool // the config came from the default path
	targetFlags
}

func (f *sourceFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.configPath, "config", "", configUsage)
	fs.Var(&f.prometheus, "prometheus", "Prometheus-compatible API to query with PromQL (repeatable)")
	fs.StringVar(&f.groupBy, "group-by", "", "PromQL: comma-separated labels that split a model's aggregate row (e.g. namespace,cluster); replicas (pod, instance) are listed under it either way")
	fs.Var(&f.dcgm, "dcgm", "dcgm-exporter URL: per-GPU memory, DRAM active, utilisation, power, temperature, joined to the models of the same host (repeatable)")
	fs.Var(&f.scrape, "scrape", "engine URL whose /metrics to scrape without probing (repeatable)")
	fs.BoolVar(&f.nvidiaSMI, "nvidia-smi", false, "read local GPUs with nvidia-smi")
	f.req.bind(fs)
	durationVar(fs, &f.interval, "interval", probe.DefaultInterval, "time between probes of one endpoint")
	fs.BoolVar(&f.noProbe, "no-probe", false, "scrape the URLs' /metrics only; send no requests")
	f.notify.bind(fs)
	fs.BoolVar(&f.noSLO, "no-slo", false, "evaluate no objectives")
	fs.BoolVar(&f.noScrape, "no-scrape", false, "probe the URLs only; do not scrape their /metrics")
	bindRecord(fs, &f.record)
	f.slo = bindSLOFlags(fs)
	f.targetFlags.bind(fs)
}

// existingDefaultConfig is the default config path when that file exists.
func existingDefaultConfig() string {
	if p := config.DefaultPath(); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// load builds the configuration: the config file (explicit, or the default
// path when it exists) plus what the flags and URL arguments add.
func (f *sourceFlags) load(urls []string) (*config.Config, error) {
	c := &config.Config{}
	sshTargets, urls := splitSSH(urls)
	path := f.configPath
	noTarget := path == "" && len(urls)+len(sshTargets) == 0 && len(f.prometheus)+len(f.scrape)+len(f.dcgm) == 0 && !f.kube.set.Enabled
	if noTarget {
		path = existingDefaultConfig()
		f.fromDefault = path != ""
	}
	if path != "" {
		var err error
		if c, err = config.Load(path); err != nil {
			return nil, err
		}
	}
	if err := f.req.validate(); err != nil {
		return nil, err
	}
	if f.interval <= 0 {
		return nil, usagef("--interval must be positive")
	}
	r := f.req
	probeDefaults := probe.Settings{Interval: slo.Duration(f.interval), MaxTokens: r.maxTokens, Disabled: f.noProbe,
		Timeout: slo.Duration(r.timeout), NoUsage: r.noUsage,
		Auth: httpclient.Auth{BearerTokenEnv: r.apiKeyEnv, BearerTokenFile: r.apiKeyFile, CAFile: r.caFile, Insecure: r.insecure}}
	headers, err := r.headerMap()
	if err != nil {
		return nil, err
	}
	probeDefaults.Headers = headers
	for _, u := range urls {
		u = withScheme(u)
		p := probeDefaults
		ep := config.Endpoint{URL: u, Model: r.model, API: r.api, Probe: &p}
		if f.noScrape {
			ep.Metrics = "off"
		}
		ep.MetricsImplied = "--no-scrape to silence" // its /metrics was not asked for: most gateways have none
		c.Endpoints = append(c.Endpoints, ep)
	}
	sshTargets = append(sshTargets, c.SSH...)
	if err := f.addFound(c, sshTargets, noTarget && path == "", probeDefaults, r.model, r.api, f.noScrape); err != nil {
		return nil, err
	}
	for _, u := range f.scrape {
		c.Endpoints = append(c.Endpoints, config.Endpoint{URL: u, Probe: &probe.Settings{Disabled: true}})
	}
	for _, u := range f.prometheus {
		c.Prometheus = append(c.Prometheus, promql.Settings{URL: u})
	}
	if f.groupBy != "" {
		var labels []string
		for _, l := range strings.Split(f.groupBy, ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		for i := range c.Prometheus {
			c.Prometheus[i].GroupBy = labels
		}
	}
	for _, u := range f.dcgm {
		c.DCGM = append(c.DCGM, gpu.Settings{URL: u})
	}
	c.NvidiaSMI = c.NvidiaSMI || f.nvidiaSMI
	f.notify.apply(&c.Notify)
	if err := c.Complete(); err != nil {
		return nil, err
	}
	return c, nil
}

// withScheme is a URL argument as the probe takes it: "gpu-1:8000" and
// "127.0.0.1:8000" just work, as http:// (every command that takes URLs).
func withScheme(u string) string {
	if !strings.Contains(u, "://") {
		return "http://" + u
	}
	return u
}

// objectives are the config's SLOs (or the defaults) with flag overrides.
func (f *sourceFlags) objectives(c *config.Config) ([]slo.Objective, error) {
	if f.noSLO {
		return nil, nil
	}
	base := slo.DefaultObjectives()
	if len(c.SLOs) > 0 {
		objs, err := config.Objectives(c.SLOs)
		if err != nil {
			return nil, err
		}
		base = objs
	}
	return f.slo.Apply(base)
}

// open loads the configuration and builds its monitor.
func (f *sourceFlags) open(urls []string, stderr io.Writer) (*monitor.Monitor, *config.Config, error) {
	c, err := f.load(urls)
	f.report(stderr) // also when nothing was found: what was left alone
	if err != nil {
		return nil, nil, err
	}
	m, err := f.build(c, stderr)
	return m, c, err
}

// build returns a monitor with every configured source added.
func (f *sourceFlags) build(c *config.Config, stderr io.Writer) (*monitor.Monitor, error) {
	objs, err := f.objectives(c)
	if err != nil {
		return nil, err
	}
	m := monitor.New(monitor.Options{Objectives: objs, SLO: f.slo.Options()})
	if err := m.AddConfig(c); err != nil {
		return nil, err
	}
	f.ssh.addTunnels(m)
	f.kube.addWatch(m, c)
	if f.record != "" {
		if err := m.AddRecorder(f.record); err != nil {
			return nil, err
		}
	}
	if m.Sources() == 0 {
		return nil, usagef("nothing to monitor: give a URL, ssh://host, --prometheus, --scrape, --dcgm or --config (try 'ttftop demo')")
	}
	for _, ep := range c.Endpoints {
		if ep.Probe != nil && ep.Probe.Insecure {
			fmt.Fprintf(stderr, "ttftop: WARNING: TLS certificate verification is OFF for %s\n", ep.Prefix())
		}
	}
	return m, nil
}

// notifyFlags are the notification flags of every command that judges
// SLOs: dashboard, demo, snapshot, serve, exporter and check. (--bell,
// where a terminal exists, is a view flag.)
type notifyFlags struct {
	onAlert string
	webhook string
}

func (n *notifyFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&n.onAlert, "on-alert", "", "command (and arguments) to run with each alert that fires or resolves, as JSON on stdin; never run through a shell; a non-zero exit is retried (3 times, backoff 1 s doubling)")
	fs.StringVar(&n.webhook, "webhook", "", "POST Alertmanager-compatible alerts (firing, re-sent each minute, and resolved) to this URL, e.g. http://am:9093/api/v2/alerts; failures are retried (3 times, backoff 1 s doubling), shown as a source, and said on stderr when headless")
}

// apply lets the flags replace the config file's notifications.
func (n notifyFlags) apply(c *config.Notify) {
	if n.onAlert != "" {
		c.OnAlert = strings.Fields(n.onAlert)
	}
	if n.webhook != "" {
		c.Webhook = &config.Webhook{URL: n.webhook}
	}
}

// bindRecord adds --record, which every monitoring mode accepts.
func bindRecord(fs *pflag.FlagSet, path *string) {
	fs.StringVar(path, "record", "", "record to this file for 'ttftop replay' (JSON lines; gzip when it ends in .gz): every observation and alert transition; a race, each chunk at the instant it arrived")
}
