package gpu

import (
	"context"
	"io"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/internal/loop"
	"github.com/ttftop/ttftop/telemetry"
)

// FBUsedMiB is the framebuffer memory in use, in MiB, summed over an
// endpoint's GPUs (telemetry has no constant for it).
const FBUsedMiB telemetry.Signal = "gpu_fb_used_mib"

// Defaults, in one place.
const (
	DefaultInterval = loop.DefaultInterval
	DefaultJitter   = loop.DefaultJitter
	DefaultTimeout  = loop.DefaultTimeout
	DefaultPath     = loop.DefaultPath
	DefaultSMI      = "nvidia-smi"
	// SMIRetry is how long to wait before looking for or restarting
	// nvidia-smi again.
	SMIRetry = 30 * time.Second
)

// Target assigns GPUs to one endpoint. A GPU belongs to the target when
// every criterion that is set matches (no criterion: every GPU) and, if
// Selectors are given, at least one selector matches.
type Target struct {
	// Endpoint is the endpoint name the readings are reported under.
	Endpoint string `json:"endpoint" yaml:"endpoint"`
	// Host matches the Hostname/hostname or pod label, case-insensitively,
	// by full name or first DNS label ("vllm-0.ns.svc" matches pod
	// "vllm-0").
	Host string `json:"host,omitempty" yaml:"host,omitempty"`
	// Pod and Namespace match the pod mapping labels exactly.
	Pod       string `json:"pod,omitempty" yaml:"pod,omitempty"`
	Namespace string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	// GPUs lists GPU indexes ("0") or UUIDs ("GPU-…").
	GPUs []string `json:"gpus,omitempty" yaml:"gpus,omitempty"`
	// Selectors are label matchers (label names case-insensitive).
	Selectors []map[string]string `json:"selectors,omitempty" yaml:"selectors,omitempty"`
	// IfMatched reports the endpoint only when one of the exporter's GPUs
	// matches: a guessed join (quick mode: "the GPUs of my host") must not
	// report "no data" from another host's exporter, where it would
	// overwrite the figures of the exporter that does serve it.
	IfMatched bool `json:"-" yaml:"-"`
}

// Config configures a dcgm-exporter scraper.
type Config struct {
	// URL is dcgm-exporter's base URL, e.g. "http://node-1:9400".
	URL string `json:"url" yaml:"url"`
	// Path defaults to "/metrics".
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Interval (default 1 s) ± Jitter (default 0.1).
	Interval time.Duration `json:"interval,omitempty" yaml:"interval,omitempty"`
	Jitter   float64       `json:"jitter,omitempty" yaml:"jitter,omitempty"`
	// HTTP: auth, TLS, timeout (default 3 s), body cap.
	HTTP httpclient.Config `json:"http,omitzero" yaml:"http,omitempty"`
	// Targets map GPUs to endpoints.
	Targets []Target `json:"targets,omitempty" yaml:"targets,omitempty"`
	// MoreTargets, when set, adds targets read at every scrape: endpoints
	// found after start (the models a server lists) join their host's
	// GPUs then.
	MoreTargets func() []Target `json:"-" yaml:"-"`
	// EmitUnmapped reports GPUs no target claims under an endpoint
	// "gpu:<host>" per host.
	EmitUnmapped bool `json:"emit_unmapped,omitempty" yaml:"emit_unmapped,omitempty"`
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time `json:"-" yaml:"-"`
	// Via names the tunnel the exporter is reached through
	// ("ssh://box"; HTTP.Dial opens it): its source says it, where the
	// far end's loopback URL alone would read as this machine's.
	Via string `json:"-" yaml:"-"`
}

// WithDefaults returns c with unset fields at their defaults (the rules
// every polled page shares: loop.Target).
func (c Config) WithDefaults() Config {
	t := loop.Target{URL: c.URL, Path: c.Path, Interval: c.Interval, Jitter: c.Jitter, HTTP: c.HTTP, Now: c.Now}.WithDefaults()
	c.URL, c.Path, c.Interval, c.Jitter, c.HTTP, c.Now = t.URL, t.Path, t.Interval, t.Jitter, t.HTTP, t.Now
	return c
}

// SMIConfig configures the nvidia-smi loop (local GPUs).
type SMIConfig struct {
	// Binary is the nvidia-smi command, looked up on PATH (default
	// "nvidia-smi").
	Binary string `json:"binary,omitempty" yaml:"binary,omitempty"`
	// Interval is passed as -lms (default 1 s).
	Interval time.Duration `json:"interval,omitempty" yaml:"interval,omitempty"`
	// Targets map local GPUs (by index or UUID) to endpoints.
	Targets []Target `json:"targets,omitempty" yaml:"targets,omitempty"`
	// EmitUnmapped reports unclaimed GPUs under "gpu:<Host>".
	EmitUnmapped bool `json:"emit_unmapped,omitempty" yaml:"emit_unmapped,omitempty"`
	// MoreTargets, when set, adds targets read at every refresh (the
	// models found after start), as Config.MoreTargets.
	MoreTargets func() []Target `json:"-" yaml:"-"`
	// Host names this machine for Target.Host and unmapped endpoints
	// (default os.Hostname()).
	Host string `json:"host,omitempty" yaml:"host,omitempty"`
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time `json:"-" yaml:"-"`
	// Exec, when set, runs nvidia-smi elsewhere (on an ssh:// host);
	// nil runs it here.
	Exec Exec `json:"-" yaml:"-"`
}

// Exec starts a command (argv) and returns its stdout and a wait that
// returns once it exits, with its stderr in the error when it failed.
type Exec func(ctx context.Context, argv []string) (stdout io.Reader, wait func() error, err error)

// WithDefaults returns c with unset fields at their defaults.
func (c SMIConfig) WithDefaults() SMIConfig {
	if c.Binary == "" {
		c.Binary = DefaultSMI
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
