// Package config reads ttftop's YAML configuration: endpoints, sources,
// probes, SLOs and display. It is the one place that maps the file onto
// the settings types of each source (probe.Settings, promql.Settings,
// gpu.Settings, scrape.Config), which own their YAML keys and defaults;
// unknown keys are errors with their line number.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/kube"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
)

// Config is the whole file.
type Config struct {
	Theme      string            `yaml:"theme"`
	ASCII      bool              `yaml:"ascii"`
	Refresh    slo.Duration      `yaml:"refresh"`
	Window     slo.Duration      `yaml:"window"`
	FPS        int               `yaml:"fps"`
	Endpoints  []Endpoint        `yaml:"endpoints"`
	Prometheus []promql.Settings `yaml:"prometheus"`
	DCGM       []gpu.Settings    `yaml:"dcgm"`
	NvidiaSMI  bool              `yaml:"nvidia_smi"`
	Probe      probe.Settings    `yaml:"probe"` // defaults for every endpoint's probe
	SLOs       []SLO             `yaml:"slos"`
	Notify     Notify            `yaml:"notify"`

	// SSH are ssh://[user@]host[:port] targets: each host's engines,
	// discovered and measured through one SSH connection.
	SSH []string `yaml:"ssh"`

	// Kube finds model pods through a Kubernetes API server.
	Kube kube.Settings `yaml:"kube"`

	doc *yaml.Node // the file as parsed, for the line numbers of errors
	// decodeErrs are the lines of the file whose values could not be
	// decoded: an entry holding one is not judged again by validate,
	// so one mistake is said once.
	decodeErrs []int
}

// Endpoint is one server to probe and scrape.
type Endpoint struct {
	// Name prefixes the endpoint keys, "<name>/<model>" (default host:port).
	Name  string `yaml:"name"`
	URL   string `yaml:"url"`
	Model string `yaml:"model"` // empty: discovered from /v1/models
	API   string `yaml:"api"`   // empty: detected from the URL
	// Metrics is the /metrics path or URL; "off" disables scraping.
	Metrics string `yaml:"metrics"`
	// Role is the server's role in a disaggregated model, as its stack
	// labels the pod (prefill, decode): its scraped rows carry it and
	// form the model's pools (docs/disaggregated.md).
	Role string `yaml:"role"`
	// MetricsImplied, set by the command line (quick mode), says the
	// scrape was not asked for and how to turn it off: a page missing
	// from the start is information, not a failure (scrape.Config.Implied).
	MetricsImplied string `yaml:"-"`
	// Labels are refused: nothing attaches them to the endpoint yet, and
	// a key that is silently ignored misleads.
	Labels  map[string]string  `yaml:"labels"`
	Probe   *probe.Settings    `yaml:"probe"` // overrides the top-level probe defaults
	GPU     *GPUMap            `yaml:"gpu"`
	Weights *bandwidth.Weights `yaml:"weights"`

	// Found says how discovery found the endpoint (set by the command
	// line, never by a file); its probed rows carry it as the label
	// "found".
	Found string `yaml:"-"`
	// Via names the tunnel its probes and scrapes go through
	// ("ssh://gpu-box"), and Dial opens those connections; both set by
	// the command line for an ssh:// target.
	Via  string              `yaml:"-"`
	Dial httpclient.DialFunc `yaml:"-"`
	// Reach is what discovery in a cluster set: the API server's
	// transport to the pod proxy, the pod's node and labels.
	Reach `yaml:"-"`
}

// Reach is how a Kubernetes pod is reached and what is known of it (set
// by the command line from sources/kube, never by a file).
type Reach struct {
	// Transport adapts the HTTP transport to the API server (its TLS
	// and credentials); nil reaches the URL directly.
	Transport httpclient.TransportFunc `yaml:"-"`
	// Node is the node the pod runs on: its GPUs are joined by it.
	Node string `yaml:"-"`
	// Tags are labels discovery attaches to the endpoint (owner, role).
	Tags map[string]string `yaml:"-"`
}

// GPUMap ties an endpoint to GPUs by dcgm labels.
type GPUMap struct {
	Hostname  string   `yaml:"hostname"`
	Pod       string   `yaml:"pod"`
	Namespace string   `yaml:"namespace"`
	GPUs      []string `yaml:"gpus"`
}

// SLO is one objective; see package slo for the semantics.
type SLO struct {
	Name          string       `yaml:"name"`
	Endpoint      string       `yaml:"endpoint"`
	Kind          string       `yaml:"kind"` // percentile, ratio, error_rate, availability
	Signal        string       `yaml:"signal"`
	Percentile    Percentile   `yaml:"percentile"` // 95, "p99", 0.95
	Threshold     string       `yaml:"threshold"`  // "5s", "50ms", "1%"
	Window        slo.Duration `yaml:"window"`
	For           slo.Duration `yaml:"for"`
	KeepFiringFor slo.Duration `yaml:"keep_firing_for"`
	Target        Ratio        `yaml:"target"` // "99%" or 0.99
	Period        slo.Duration `yaml:"period"`
}

// Notify configures alert notifications.
type Notify struct {
	Bell    bool     `yaml:"bell"`
	OnAlert []string `yaml:"on_alert"` // argv, never a shell string
	Webhook *Webhook `yaml:"webhook"`
}

// Webhook posts Alertmanager-compatible alerts.
type Webhook struct {
	URL             string       `yaml:"url"`
	Timeout         slo.Duration `yaml:"timeout"`
	httpclient.Auth `yaml:",inline"`
}

// Load reads and validates a config file.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a config, rejects unknown keys (with line numbers), applies
// defaults and validates. Every mistake of a file is reported at once,
// each with its line, except after a syntax error, where the parser stops.
func Parse(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(data, err)
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var errs []string
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		// A TypeError leaves the rest decoded: unknown keys and bad
		// values are collected, and validation still runs.
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, cleanYAMLError(err)
		}
		errs = cleanTypeErrors(te.Errors)
	}
	c.doc = &doc
	c.decodeErrs = lineNumbers(errs)
	c.applyDefaults()
	errs = append(errs, c.problems()...)
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(byLine(errs), "; "))
	}
	return &c, nil
}

// Complete applies the defaults and validates; Parse calls it, and so do
// commands that build a Config from flags.
func (c *Config) Complete() error {
	c.applyDefaults()
	return c.validate()
}

// cleanYAMLError turns "yaml: unmarshal errors:\n  line 3: field x not
// found in type config.Endpoint" into "line 3: unknown key \"x\"".
func cleanYAMLError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	return errors.New(strings.Join(cleanTypeErrors(strings.Split(msg, "\n")), "; "))
}

// cleanTypeErrors words the decoder's errors for people: an unknown field
// is an unknown key, without Go's type names.
func cleanTypeErrors(in []string) []string {
	var out []string
	for _, line := range in {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, ": field "); i >= 0 && strings.Contains(line, " not found in type ") {
			key := line[i+len(": field "):]
			key = key[:strings.Index(key, " not found")]
			line = fmt.Sprintf("%s: unknown key %q", line[:i], key)
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// DefaultPath is $XDG_CONFIG_HOME/ttftop/config.yaml (or ~/.config/…);
// "" when no home is known.
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "ttftop", "config.yaml")
}
