package monitor

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

// AddConfig adds every source a config file describes: a probe and a
// scrape of its /metrics per endpoint (one scrape per metrics URL),
// PromQL servers, dcgm-exporters with the endpoints' GPU maps, and
// nvidia-smi.
func (m *Monitor) AddConfig(c *config.Config) error {
	// One scrape per metrics URL; several endpoints on one server share
	// it, each adding its model's MBU description.
	scrapes := map[string]*scrape.Config{}
	var order []string
	var targets []gpu.Target
	joinable := false // endpoints without a GPU map: joined to their host's GPUs
	for _, ep := range c.Endpoints {
		if ep.GPU == nil && (len(c.DCGM) > 0 || c.NvidiaSMI) {
			joinable = true
		}
		if !ep.Probe.Disabled {
			o, err := ProbeOptions(ep)
			if err != nil {
				return err
			}
			if err := m.AddProbe(o, ep.Prefix()); err != nil {
				return fmt.Errorf("endpoint %s: %w", ep.Prefix(), err)
			}
		}
		if sc, ok := ScrapeConfig(ep); ok {
			key := sc.URL + sc.Path
			prev, seen := scrapes[key]
			if !seen {
				scrapes[key], order = &sc, append(order, key)
				prev = &sc
			}
			if seen && len(sc.MBU) > 0 {
				if prev.MBU == nil {
					prev.MBU = map[string]bandwidth.Model{}
				}
				for k, v := range sc.MBU {
					prev.MBU[k] = v
				}
			}
			if seen && prev.Model != sc.Model {
				prev.Model = "" // several models: the engine's labels name them
			}
		}
		if ep.GPU != nil {
			targets = append(targets, gpu.Target{Endpoint: ep.Prefix() + "/" + ep.Model, Host: ep.GPU.Hostname,
				Pod: ep.GPU.Pod, Namespace: ep.GPU.Namespace, GPUs: ep.GPU.GPUs})
		}
	}
	for _, key := range order {
		m.AddScrape(*scrapes[key])
	}
	for _, p := range c.Prometheus {
		if err := m.AddPromQL(FleetPromQLConfig(c, p)); err != nil {
			return fmt.Errorf("prometheus %s: %w", httpclient.Redact(p.URL), err)
		}
	}
	for _, d := range c.DCGM {
		dc := DCGMConfig(d, targets)
		if joinable {
			// Quick mode: the models found on a host get that host's GPUs;
			// GPUs nothing claims are said as a warning, not a phantom row.
			dc.EmitUnmapped = false
			dc.MoreTargets = m.gpus.targetsFor(cmp.Or(d.Node, d.Via, hostOf(d.URL)))
		}
		m.AddDCGM(dc)
	}
	if c.NvidiaSMI {
		sc := gpu.SMIConfig{Targets: targets, EmitUnmapped: len(targets) == 0}
		if joinable {
			// Quick mode: nvidia-smi's GPUs are this machine's, so the
			// models served from loopback (or this host's name) get them.
			sc.EmitUnmapped = false
			sc.MoreTargets = m.gpus.targetsFor("localhost")
		}
		m.AddNvidiaSMI(sc)
	}
	return nil
}

// DCGMConfig converts a config dcgm entry; the endpoints' GPU maps are its
// targets, and with none every GPU is reported under its host.
func DCGMConfig(d config.DCGM, targets []gpu.Target) gpu.Config {
	c := gpu.Config{URL: d.URL, Interval: d.Interval.D(), HTTP: HTTPConfig(d.Auth), Targets: targets, EmitUnmapped: len(targets) == 0, Via: d.Via}
	c.HTTP.Dial, c.HTTP.Transport = d.Dial, d.Transport
	return c
}

// LabelFound is the label of a discovered endpoint: how it was found
// ("vllm, pid 4312, :8000 from its --port").
const LabelFound = "found"

// LabelVia names the tunnel an endpoint is reached through: its client
// figures (TTFT, E2E, the network share) include the tunnel's time.
const LabelVia = "via"

// viaWords is the via label: "" (no label) without a tunnel.
func viaWords(via string) string {
	if via == "" {
		return ""
	}
	return via + viaSuffix
}

const viaSuffix = " (client figures include the tunnel)"

// LabelNode is a Kubernetes pod's node: its GPUs are that node's.
const LabelNode = "node"

// joinHost is the host an endpoint's GPUs are on: a pod's node, the
// tunnel's for one reached through a tunnel (its URL names the far end's
// loopback), else its URL's.
func joinHost(o probe.Options) string {
	if node := o.Labels[LabelNode]; node != "" {
		return node
	}
	if via, ok := strings.CutSuffix(o.Labels[LabelVia], viaSuffix); ok {
		return via
	}
	return hostOf(o.URL)
}

// FoundLabels are a discovered endpoint's found and via labels, only the
// non-empty ones; nil for an endpoint that was given.
func FoundLabels(ep config.Endpoint) map[string]string {
	var labels map[string]string
	all := map[string]string{LabelFound: ep.Found, LabelVia: viaWords(ep.Via), LabelNode: ep.Node}
	for k, v := range ep.Tags {
		all[k] = v
	}
	for k, v := range all {
		if v != "" {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = v
		}
	}
	return labels
}

// ProbeOptions converts a config endpoint into probe options.
func ProbeOptions(ep config.Endpoint) (probe.Options, error) {
	pc := ep.Probe
	if pc == nil {
		pc = &config.Probe{}
	}
	o := probe.Options{URL: ep.URL, API: probe.API(ep.API), Model: ep.Model,
		MaxTokens: pc.MaxTokens, Timeout: pc.Timeout.D(), StallTimeout: pc.StallTimeout.D(),
		Interval: pc.Interval.D(), Concurrency: pc.Concurrency, NoUsage: pc.NoUsage,
		ContinuousUsage: pc.ContinuousUsage,
		Auth:            probe.Auth{TokenEnv: pc.BearerTokenEnv, TokenFile: pc.BearerTokenFile, CAFile: pc.CAFile, Insecure: pc.Insecure}}
	if ep.Model != "" {
		o.Name = ep.Prefix() + "/" + ep.Model
	}
	o.Labels, o.Dial, o.Transport = FoundLabels(ep), ep.Dial, ep.Transport
	if pc.Seed != 0 {
		seed := pc.Seed
		o.Seed = &seed
	}
	prompt, err := Prompt(pc.Prompt, pc.PromptFile)
	if err != nil {
		return o, fmt.Errorf("endpoint %s: %w", ep.Prefix(), err)
	}
	o.Prompt = prompt
	for k, v := range pc.Headers {
		o.Headers = append(o.Headers, probe.Header{Name: k, Value: probe.Secret(v)})
	}
	return o, nil
}

// Prompt resolves a prompt setting: a file, a built-in name (short,
// medium, long) or literal text.
func Prompt(name, file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("prompt file: %w", err)
		}
		return string(b), nil
	}
	if p, ok := probe.BuiltinPrompts()[name]; ok {
		return p, nil
	}
	return name, nil
}

// ScrapeConfig is the /metrics scrape of a config endpoint, on the same
// host as its API; ok is false when scraping is off.
func ScrapeConfig(ep config.Endpoint) (scrape.Config, bool) {
	if ep.Metrics == "off" {
		return scrape.Config{}, false
	}
	u, err := url.Parse(ep.URL)
	if err != nil || u.Host == "" {
		return scrape.Config{}, false
	}
	sc := scrape.Config{URL: u.Scheme + "://" + u.Host, Path: "/metrics", Name: ep.Name, Model: ep.Model}
	if ep.Metrics == "" {
		sc.Implied = ep.MetricsImplied
	}
	if pc := ep.Probe; pc != nil {
		sc.HTTP = HTTPConfig(pc.Auth)
	}
	sc.HTTP.Dial, sc.HTTP.Transport = ep.Dial, ep.Transport
	switch m := ep.Metrics; {
	case strings.HasPrefix(m, "http://") || strings.HasPrefix(m, "https://"):
		if mu, err := url.Parse(m); err == nil {
			sc.URL, sc.Path = mu.Scheme+"://"+mu.Host, mu.Path
		}
	case m != "":
		sc.Path = m
	}
	if w := ep.Weights; w != nil {
		key := ep.Model
		if key == "" {
			key = "*"
		}
		sc.MBU = map[string]bandwidth.Model{key: w.Model()}
	}
	return sc, true
}

// HTTPConfig converts config auth into the shared HTTP client config.
func HTTPConfig(a config.Auth) httpclient.Config {
	c := httpclient.Config{CAFile: a.CAFile, InsecureSkipVerify: a.Insecure,
		BearerToken: httpclient.SecretSource{Env: a.BearerTokenEnv, File: a.BearerTokenFile}}
	if len(a.Headers) > 0 {
		c.Headers = map[string]httpclient.SecretSource{}
		for k, v := range a.Headers {
			c.Headers[k] = httpclient.SecretSource{Value: httpclient.Secret(v)}
		}
	}
	return c
}

// PromQLConfig converts a config Prometheus entry.
func PromQLConfig(p config.Prometheus) promql.Config {
	c := promql.Config{URL: p.URL, GroupBy: p.GroupBy, ReplicaLabels: p.ReplicaLabels, Models: p.Models, Window: p.Window.D(), Refresh: p.Interval.D(), MaxLag: p.MaxLag.D(), HTTP: HTTPConfig(p.Auth)}
	c.HTTP.Timeout = p.Timeout.D()
	for model, w := range p.Weights {
		if c.MBU == nil {
			c.MBU = map[string]bandwidth.Model{}
		}
		c.MBU[model] = w.Model()
	}
	if p.Username != "" {
		c.Basic = promql.BasicAuth{User: p.Username, Password: httpclient.SecretSource{Env: p.PasswordEnv, File: p.PasswordFile}}
	}
	if len(p.Queries) > 0 {
		c.Queries = map[telemetry.Signal]string{}
		for k, q := range p.Queries {
			c.Queries[telemetry.Signal(k)] = q
		}
	}
	return c
}

// FleetPromQLConfig is PromQLConfig with the endpoints' weights describing
// their models in the fleet too, unless the prometheus entry has its own.
func FleetPromQLConfig(c *config.Config, p config.Prometheus) promql.Config {
	pc := PromQLConfig(p)
	for _, ep := range c.Endpoints {
		if _, own := pc.MBU[ep.Model]; ep.Weights != nil && ep.Model != "" && !own {
			if pc.MBU == nil {
				pc.MBU = map[string]bandwidth.Model{}
			}
			pc.MBU[ep.Model] = ep.Weights.Model()
		}
	}
	return pc
}

// Objectives converts the config file's SLOs (config.Objectives: the
// rules Parse already checked).
func Objectives(in []config.SLO) ([]slo.Objective, error) { return config.Objectives(in) }

// gpuJoin joins endpoints that have no GPU map to the GPUs of their host:
// the models a server lists are known only once it answers, so they are
// registered as the probes find them, and each dcgm scrape reads them.
type gpuJoin struct {
	mu        sync.Mutex
	endpoints []joinedEndpoint
}

type joinedEndpoint struct{ name, host string }

// add registers a probed endpoint served from host.
func (j *gpuJoin) add(name, host string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.endpoints {
		if e.name == name {
			return
		}
	}
	j.endpoints = append(j.endpoints, joinedEndpoint{name, host})
}

// targetsFor returns the targets of a dcgm-exporter at dcgmHost: an
// endpoint on that host gets every GPU it reports (the exporter runs
// beside the engine); one elsewhere gets the GPUs whose Hostname label
// is its host. Several models on one host share its GPUs.
func (j *gpuJoin) targetsFor(dcgmHost string) func() []gpu.Target {
	return func() []gpu.Target {
		j.mu.Lock()
		defer j.mu.Unlock()
		out := make([]gpu.Target, 0, len(j.endpoints))
		for _, e := range j.endpoints {
			t := gpu.Target{Endpoint: e.name, IfMatched: true}
			if !sameHost(e.host, dcgmHost) {
				t.Host = e.host
			}
			out = append(out, t)
		}
		return out
	}
}

// hostOf is the host name of a URL ("" when it has none).
func hostOf(raw string) string {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// sameHost: names equal, or both this machine's loopback name
// (localhost, 127.0.0.1, ::1). Other loopback addresses (127.0.0.2…)
// are hosts of their own, as tests and local multi-server setups use
// them, so each gets only its own exporter's GPUs.
func sameHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	local := func(h string) bool {
		if strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
	}
	return local(a) && local(b)
}
