// Package config reads ttftop's YAML configuration: endpoints, sources,
// probes, SLOs and display. Defaults live in one place (Defaults and
// applyDefaults); unknown keys are errors with their line number.
package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ttftop/ttftop/sources/kube"
)

// Config is the whole file.
type Config struct {
	Theme      string       `yaml:"theme"`
	ASCII      bool         `yaml:"ascii"`
	Refresh    Duration     `yaml:"refresh"`
	Window     Duration     `yaml:"window"`
	FPS        int          `yaml:"fps"`
	Endpoints  []Endpoint   `yaml:"endpoints"`
	Prometheus []Prometheus `yaml:"prometheus"`
	DCGM       []DCGM       `yaml:"dcgm"`
	NvidiaSMI  bool         `yaml:"nvidia_smi"`
	Probe      Probe        `yaml:"probe"` // defaults for every endpoint's probe
	SLOs       []SLO        `yaml:"slos"`
	Notify     Notify       `yaml:"notify"`

	// SSH are ssh://[user@]host[:port] targets: each host's engines,
	// discovered and measured through one SSH connection.
	SSH []string `yaml:"ssh"`

	// Kube finds model pods through a Kubernetes API server.
	Kube kube.Settings `yaml:"kube"`

	doc *yaml.Node // the file as parsed, for the line numbers of errors
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
	// MetricsImplied, set by the command line (quick mode), says the
	// scrape was not asked for and how to turn it off: a page missing
	// from the start is information, not a failure (scrape.Config.Implied).
	MetricsImplied string `yaml:"-"`
	// Labels are refused: nothing attaches them to the endpoint yet, and
	// a key that is silently ignored misleads.
	Labels  map[string]string `yaml:"labels"`
	Probe   *Probe            `yaml:"probe"` // overrides the top-level probe defaults
	GPU     *GPUMap           `yaml:"gpu"`
	Weights *Weights          `yaml:"weights"`

	// Found says how discovery found the endpoint (set by the command
	// line, never by a file); its probed rows carry it as the label
	// "found".
	Found string `yaml:"-"`
	// Via names the tunnel its probes and scrapes go through
	// ("ssh://gpu-box"), and Dial opens those connections; both set by
	// the command line for an ssh:// target.
	Via  string                                                            `yaml:"-"`
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `yaml:"-"`
	// Reach is what discovery in a cluster set: the API server's
	// transport to the pod proxy, the pod's node and labels.
	Reach `yaml:"-"`
}

// Reach is how a Kubernetes pod is reached and what is known of it (set
// by the command line from sources/kube, never by a file).
type Reach struct {
	// Transport adapts the HTTP transport to the API server (its TLS
	// and credentials); nil reaches the URL directly.
	Transport func(*http.Transport) (http.RoundTripper, error) `yaml:"-"`
	// Node is the node the pod runs on: its GPUs are joined by it.
	Node string `yaml:"-"`
	// Tags are labels discovery attaches to the endpoint (owner, role).
	Tags map[string]string `yaml:"-"`
}

// Auth holds credentials by reference only: an env var name or a file
// (re-read per request). Never the secret itself.
type Auth struct {
	BearerTokenEnv  string `yaml:"bearer_token_env"`
	BearerTokenFile string `yaml:"bearer_token_file"`
	// Username and the password are basic auth, which only the
	// prometheus entries send; elsewhere they are refused.
	Username     string            `yaml:"username"`
	PasswordEnv  string            `yaml:"password_env"`
	PasswordFile string            `yaml:"password_file"`
	Headers      map[string]string `yaml:"headers"`
	CAFile       string            `yaml:"ca_file"`
	Insecure     bool              `yaml:"insecure"`
}

// Probe configures synthetic streaming requests.
type Probe struct {
	Disabled     bool     `yaml:"disabled"`
	Interval     Duration `yaml:"interval"`
	Concurrency  int      `yaml:"concurrency"`
	MaxTokens    int      `yaml:"max_tokens"`
	Prompt       string   `yaml:"prompt"` // short, medium, long or literal text
	PromptFile   string   `yaml:"prompt_file"`
	Timeout      Duration `yaml:"timeout"`
	StallTimeout Duration `yaml:"stall_timeout"`
	Seed         int64    `yaml:"seed"`
	// NoUsage sends no stream_options (servers that reject it).
	NoUsage bool `yaml:"no_usage"`
	// ContinuousUsage asks vLLM for usage on every chunk, the exact
	// tokens of each event (speculative decoding sends several).
	ContinuousUsage bool `yaml:"continuous_usage"`
	Auth            `yaml:",inline"`
}

// Prometheus is one PromQL source for a fleet.
type Prometheus struct {
	URL     string   `yaml:"url"`
	GroupBy []string `yaml:"group_by"`
	// ReplicaLabels identify one replica of a model (default pod,
	// instance); Models names the model of engines without a model label
	// (TGI, llama.cpp) by job label value (default: the job).
	ReplicaLabels []string          `yaml:"replica_labels"`
	Models        map[string]string `yaml:"models"`
	Window        Duration          `yaml:"window"`
	Interval      Duration          `yaml:"interval"`
	Timeout       Duration          `yaml:"timeout"`
	// MaxLag bounds how long a step that came back empty is asked for
	// again while the store catches up (ingestion delay); default 5m.
	MaxLag  Duration          `yaml:"max_lag"`
	Queries map[string]string `yaml:"queries"`
	// Weights describe the models for the MBU estimate, by model name
	// ("*": any model), as an endpoint's weights do for its scrape.
	Weights map[string]Weights `yaml:"weights"`
	Auth    `yaml:",inline"`
}

// DCGM is one dcgm-exporter to scrape directly.
type DCGM struct {
	URL      string   `yaml:"url"`
	Interval Duration `yaml:"interval"`
	Auth     `yaml:",inline"`
	// Via and Dial: the tunnel an exporter found on an ssh:// host is
	// reached through, as Endpoint's.
	Via  string                                                            `yaml:"-"`
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `yaml:"-"`
	// Reach: an exporter pod found in a cluster (its Node joins it).
	Reach `yaml:"-"`
}

// GPUMap ties an endpoint to GPUs by dcgm labels.
type GPUMap struct {
	Hostname  string   `yaml:"hostname"`
	Pod       string   `yaml:"pod"`
	Namespace string   `yaml:"namespace"`
	GPUs      []string `yaml:"gpus"`
}

// Weights describe the model for the MBU estimate.
type Weights struct {
	Parameters     float64 `yaml:"parameters"` // e.g. 8e9
	DType          string  `yaml:"dtype"`      // bf16, fp8, int4…
	TensorParallel int     `yaml:"tensor_parallel"`
	// GPU names the GPU for its peak bandwidth: as dcgm-exporter or
	// nvidia-smi report it, or short where unambiguous ("H200").
	GPU string `yaml:"gpu"`
	// PeakBandwidth per GPU overrides the GPU's table peak.
	PeakBandwidth Bandwidth `yaml:"peak_bandwidth"`
	// KVBytesPerToken = 2 × layers × KV heads × head dim × KV dtype bytes;
	// 0 leaves live KV bytes out of MBU (an underestimate at large batch).
	KVBytesPerToken float64 `yaml:"kv_bytes_per_token"`
}

// SLO is one objective; see package slo for the semantics.
type SLO struct {
	Name          string     `yaml:"name"`
	Endpoint      string     `yaml:"endpoint"`
	Kind          string     `yaml:"kind"` // percentile, ratio, error_rate, availability
	Signal        string     `yaml:"signal"`
	Percentile    Percentile `yaml:"percentile"` // 95, "p99", 0.95
	Threshold     string     `yaml:"threshold"`  // "5s", "50ms", "1%"
	Window        Duration   `yaml:"window"`
	For           Duration   `yaml:"for"`
	KeepFiringFor Duration   `yaml:"keep_firing_for"`
	Target        Ratio      `yaml:"target"` // "99%" or 0.99
	Period        Duration   `yaml:"period"`
}

// Notify configures alert notifications.
type Notify struct {
	Bell    bool     `yaml:"bell"`
	OnAlert []string `yaml:"on_alert"` // argv, never a shell string
	Webhook *Webhook `yaml:"webhook"`
}

// Webhook posts Alertmanager-compatible alerts.
type Webhook struct {
	URL     string   `yaml:"url"`
	Timeout Duration `yaml:"timeout"`
	Auth    `yaml:",inline"`
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
// defaults and validates.
func Parse(r io.Reader) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, cleanYAMLError(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, cleanYAMLError(err)
	}
	c.doc = &doc
	if err := c.Complete(); err != nil {
		return nil, err
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
	var out []string
	for _, line := range strings.Split(msg, "\n") {
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
	return errors.New(strings.Join(out, "; "))
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
