package scrape

import (
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/internal/loop"
	"github.com/ttftop/ttftop/telemetry"
)

// Defaults, in one place.
const (
	DefaultPath     = loop.DefaultPath
	DefaultInterval = loop.DefaultInterval
	DefaultJitter   = loop.DefaultJitter
	DefaultTimeout  = loop.DefaultTimeout
	// ModelInfoRetry is how long a failed model-info lookup (TGI /info,
	// llama.cpp /v1/models) waits before it is tried again.
	ModelInfoRetry = 30 * time.Second
)

// Config configures one scrape target.
type Config struct {
	// URL is the target's base URL, e.g. "http://10.0.0.5:8000".
	URL string `json:"url" yaml:"url"`
	// Path of the metrics page: "/metrics" by default; NIM serves
	// "/v1/metrics", trtllm-serve "/prometheus/metrics".
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Name replaces "host:port" in endpoint names ("<name>/<model>").
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// Interval between scrapes (default 1 s); each wait varies by ±Jitter
	// of it (default 0.1) so many targets do not scrape in lockstep.
	Interval time.Duration `json:"interval,omitempty" yaml:"interval,omitempty"`
	Jitter   float64       `json:"jitter,omitempty" yaml:"jitter,omitempty"`
	// RateWindow is the span counter rates and ratios are taken over:
	// the scrapes of the last RateWindow (default RateWindow(Interval)).
	// One interval or less gives the rate between two scrapes.
	RateWindow time.Duration `json:"rate_window,omitempty" yaml:"rate_window,omitempty"`
	// HTTP holds auth, TLS, timeout (default 3 s here), redirect limit
	// and body cap (default 32 MiB).
	HTTP httpclient.Config `json:"http,omitzero" yaml:"http,omitempty"`
	// Engine forces the engine instead of detecting it from metric names.
	Engine telemetry.Engine `json:"engine,omitempty" yaml:"engine,omitempty"`
	// Role is the target's role in a disaggregated model, as its stack
	// labels the pod ("prefill", "decode": llm-d.ai/role): its endpoints
	// carry it as telemetry.LabelRole, so the views put the model's
	// workers into pools (docs/disaggregated.md). Empty: not said.
	Role string `json:"role,omitempty" yaml:"role,omitempty"`
	// Model names the model of an engine without a model label when its
	// info endpoint does not answer (TGI /info, llama.cpp /v1/models).
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	// StripPrefix is removed from metric names of a relabelling exporter
	// ("kserve_" turns "kserve_vllm:…" into "vllm:…").
	StripPrefix string `json:"strip_prefix,omitempty" yaml:"strip_prefix,omitempty"`
	// OpenMetrics asks for OpenMetrics first (the text format otherwise);
	// whichever the server sends is parsed.
	OpenMetrics bool `json:"openmetrics,omitempty" yaml:"openmetrics,omitempty"`
	// MBU configures the MBU estimate per model name ("*" for any model).
	// Without an entry no MBU is emitted.
	MBU map[string]bandwidth.Model `json:"mbu,omitempty" yaml:"mbu,omitempty"`
	// Implied, when set, says the scrape was not asked for (quick mode
	// scrapes every probed URL's /metrics) and how to turn it off
	// ("--no-scrape to silence"): a page that is missing (404, 410) or not
	// a Prometheus exposition from the first scrape on is said once, as
	// information (source state no data), and not fetched again. Once a
	// scrape has worked, failures are failures.
	Implied string `json:"-" yaml:"-"`
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time `json:"-" yaml:"-"`
}

// WithDefaults returns c with unset fields at their defaults (the rules
// every polled page shares: loop.Target).
func (c Config) WithDefaults() Config {
	t := loop.Target{URL: c.URL, Path: c.Path, Interval: c.Interval, Jitter: c.Jitter, HTTP: c.HTTP, Now: c.Now}.WithDefaults()
	c.URL, c.Path, c.Interval, c.Jitter, c.HTTP, c.Now = t.URL, t.Path, t.Interval, t.Jitter, t.HTTP, t.Now
	if c.RateWindow <= 0 {
		c.RateWindow = RateWindow(c.Interval)
	}
	return c
}
