package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/sources/scrape"
)

// An endpoint entry is mapped here onto the sources it feeds: its probe
// (probe.Options, with its probe block's settings) and the scrape of its
// /metrics page (scrape.Config); a prometheus entry onto its source, with
// the endpoints' weights describing their models in the fleet too.

// Prefix is the first part of the endpoint keys this entry yields,
// "<prefix>/<model>": its name, else the URL's host:port. Probes and
// scrapes of the same server use it, so their data meet on one endpoint.
func (e Endpoint) Prefix() string {
	if e.Name != "" {
		return e.Name
	}
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		return u.Host
	}
	return e.URL
}

// LabelFound is the label of a discovered endpoint: how it was found
// ("vllm, pid 4312, :8000 from its --port").
const LabelFound = "found"

// LabelVia names the tunnel an endpoint is reached through: its client
// figures (TTFT, E2E, the network share) include the tunnel's time.
const LabelVia = "via"

const viaSuffix = " (client figures include the tunnel)"

// LabelNode is a Kubernetes pod's node: its GPUs are that node's.
const LabelNode = "node"

// TunnelOf is the tunnel an endpoint's via label names ("ssh://box"),
// false without one.
func TunnelOf(labels map[string]string) (string, bool) {
	return strings.CutSuffix(labels[LabelVia], viaSuffix)
}

// FoundLabels are a discovered endpoint's found and via labels, only the
// non-empty ones; nil for an endpoint that was given.
func (e Endpoint) FoundLabels() map[string]string {
	var labels map[string]string
	via := ""
	if e.Via != "" {
		via = e.Via + viaSuffix
	}
	all := map[string]string{LabelFound: e.Found, LabelVia: via, LabelNode: e.Node}
	for k, v := range e.Tags {
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

// ProbeOptions are the options of the endpoint's probe: its URL, API,
// model and name, the labels of how it was found, and its probe block.
func (e Endpoint) ProbeOptions() (probe.Options, error) {
	o := probe.Options{URL: e.URL, API: probe.API(e.API), Model: e.Model, Labels: e.FoundLabels(), Dial: e.Dial, Transport: e.Transport}
	if e.Model != "" {
		o.Name = e.Prefix() + "/" + e.Model
	}
	s := probe.Settings{}
	if e.Probe != nil {
		s = *e.Probe
	}
	if err := s.Apply(&o); err != nil {
		return o, fmt.Errorf("endpoint %s: %w", e.Prefix(), err)
	}
	return o, nil
}

// Scrape is the scrape of the endpoint's /metrics page, on the same host
// as its API unless metrics names another; ok is false when scraping is
// off.
func (e Endpoint) Scrape() (scrape.Config, bool) {
	if e.Metrics == "off" {
		return scrape.Config{}, false
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.Host == "" {
		return scrape.Config{}, false
	}
	sc := scrape.Config{URL: u.Scheme + "://" + u.Host, Path: "/metrics", Name: e.Name, Model: e.Model, Role: e.Role}
	if e.Metrics == "" {
		sc.Implied = e.MetricsImplied
	}
	if e.Probe != nil {
		sc.HTTP = e.Probe.Auth.Config()
	}
	sc.HTTP.Dial, sc.HTTP.Transport = e.Dial, e.Transport
	switch m := e.Metrics; {
	case strings.HasPrefix(m, "http://") || strings.HasPrefix(m, "https://"):
		if mu, err := url.Parse(m); err == nil {
			sc.URL, sc.Path = mu.Scheme+"://"+mu.Host, mu.Path
		}
	case m != "":
		sc.Path = m
	}
	if w := e.Weights; w != nil {
		key := e.Model
		if key == "" {
			key = "*"
		}
		sc.MBU = map[string]bandwidth.Model{key: w.Model()}
	}
	return sc, true
}

// PromQL is the source of prometheus entry p, the endpoints' weights
// describing their models in the fleet too unless p has its own.
func (c *Config) PromQL(p promql.Settings) promql.Config {
	pc := p.Config()
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
