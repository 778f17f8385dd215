package promql

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

// Config configures a PromQL source. Zero fields take the defaults of
// DefaultConfig, the one place where defaults live.
type Config struct {
	// URL is the Prometheus HTTP API root: https://prom:9090, or the
	// Prometheus-compatible prefix of Thanos, Mimir (…/prometheus) or
	// VictoriaMetrics (…/select/0/prometheus). Required.
	URL string `json:"url" yaml:"url"`
	// Name is shown in the source status line.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`

	// Refresh is how often gauges are queried and new histogram steps
	// are fetched.
	Refresh time.Duration `json:"refresh,omitempty" yaml:"refresh,omitempty"`
	// Window is W, the range of rate() in gauge queries ([W]).
	Window time.Duration `json:"window,omitempty" yaml:"window,omitempty"`
	// ScrapeInterval is Prometheus' scrape interval for the engines. It
	// sets the default HistogramStep and the staleness interval of gauges.
	ScrapeInterval time.Duration `json:"scrape_interval,omitempty" yaml:"scrape_interval,omitempty"`
	// HistogramStep is R: cumulative histograms are evaluated at multiples
	// of R and differenced into consecutive, non-overlapping windows.
	// Zero means max(15s, ScrapeInterval).
	HistogramStep time.Duration `json:"histogram_step,omitempty" yaml:"histogram_step,omitempty"`
	// Delay keeps histogram steps this far behind the server's clock so
	// that the scrapes before a step have been ingested (later data is not
	// lost: it counts in the next window).
	Delay time.Duration `json:"delay,omitempty" yaml:"delay,omitempty"`
	// MaxLag bounds how far behind the server's clock the store may be
	// (ingestion or query delay: VictoriaMetrics' -search.latencyOffset,
	// Thanos, Mimir). Histogram steps newer than the store's newest sample,
	// or that came back empty, are fetched again on later refreshes until
	// they are MaxLag old; only then is an empty step no data. The lag the
	// store shows is learned each refresh and shown in the source status.
	MaxLag time.Duration `json:"max_lag,omitempty" yaml:"max_lag,omitempty"`
	// Backfill is how much histogram history is loaded at start (and the
	// most that is caught up after failures). Zero means max(Window, R).
	Backfill time.Duration `json:"backfill,omitempty" yaml:"backfill,omitempty"`
	// DiscoveryInterval is how often the metric families present are
	// listed (one label-values call).
	DiscoveryInterval time.Duration `json:"discovery_interval,omitempty" yaml:"discovery_interval,omitempty"`
	// Quantile replaces $Q in custom queries.
	Quantile float64 `json:"quantile,omitempty" yaml:"quantile,omitempty"`
	// GroupBy are extra grouping labels (instance, namespace, …) added
	// to every query; they become part of endpoint names:
	// "<instance>/<model>".
	GroupBy []string `json:"group_by,omitempty" yaml:"group_by,omitempty"`
	// ReplicaLabels identify one replica of a model (default pod,
	// instance): each replica is an endpoint of its own, grouped under an
	// aggregate endpoint per model (and GroupBy values). The first label
	// set names the replica.
	ReplicaLabels []string `json:"replica_labels,omitempty" yaml:"replica_labels,omitempty"`
	// RoleLabels name a replica's role in a disaggregated model (default
	// llm_d_ai_role, the Prometheus form of llm-d's llm-d.ai/role pod
	// label, and Dynamo's worker_type): the first set splits a model into
	// one aggregate per role, its pool ("<model> [prefill]"), labelled
	// role (telemetry.LabelRole). A model without them is one aggregate.
	RoleLabels []string `json:"role_labels,omitempty" yaml:"role_labels,omitempty"`
	// Models names the model of engines without a model label (TGI,
	// llama.cpp), keyed by job label value; without an entry the job label
	// is the model. The endpoint's model_from label says
	// which was used.
	Models map[string]string `json:"models,omitempty" yaml:"models,omitempty"`
	// MBU configures the MBU estimate per model name ("*" for any model),
	// as for the direct scrape (sources/scrape); without an entry no MBU
	// is emitted.
	MBU map[string]bandwidth.Model `json:"mbu,omitempty" yaml:"mbu,omitempty"`
	// Queries overrides both default queries of a signal (queries.go for
	// the placeholders): a range query of cumulative histograms for a
	// distribution signal, an instant query otherwise.
	Queries map[telemetry.Signal]string `json:"queries,omitempty" yaml:"queries,omitempty"`
	// FreshnessQuery returns, per endpoint, the timestamp of its newest
	// sample; it dates gauge values. Empty means the default.
	FreshnessQuery string `json:"freshness_query,omitempty" yaml:"freshness_query,omitempty"`
	// Concurrency is the number of queries in flight at once.
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty"`
	// MaxEndpoints caps how many endpoints are tracked, against label
	// explosions.
	MaxEndpoints int `json:"max_endpoints,omitempty" yaml:"max_endpoints,omitempty"`

	// HTTP is the shared client configuration (sources/httpclient): bearer
	// token, headers such as X-Scope-OrgID, CA file, server name, TLS
	// verification, redirects, body cap (default 32 MiB), user agent, and
	// Timeout, here the limit of one query, client and server side
	// (default 10s).
	HTTP httpclient.Config `json:"http,omitzero" yaml:"http,omitempty"`
	// Basic adds HTTP basic auth.
	Basic BasicAuth `json:"basic_auth,omitzero" yaml:"basic_auth,omitempty"`
}

// The defaults a config file and the flags share (DefaultConfig has them
// all).
const (
	DefaultRefresh = 5 * time.Second
	DefaultWindow  = 5 * time.Minute
	DefaultMaxLag  = 5 * time.Minute
	// DefaultQueryTimeout replaces httpclient's 5s default: a PromQL query
	// over many series may take longer than a scrape.
	DefaultQueryTimeout = 10 * time.Second
)

// DefaultConfig returns the defaults, URL left empty.
func DefaultConfig() Config {
	return Config{
		Name:              "prometheus",
		Refresh:           DefaultRefresh,
		Window:            DefaultWindow,
		ScrapeInterval:    15 * time.Second,
		Delay:             5 * time.Second,
		MaxLag:            DefaultMaxLag,
		DiscoveryInterval: time.Minute,
		Quantile:          0.99,
		Concurrency:       4,
		MaxEndpoints:      1000,
		ReplicaLabels:     []string{"pod", "instance"},
		RoleLabels:        []string{"llm_d_ai_role", "worker_type"},
		HTTP:              httpclient.Config{Timeout: DefaultQueryTimeout},
	}
}

// minHistogramStep is the smallest default R.
const minHistogramStep = 15 * time.Second

// maxBackfillSteps bounds one range query (Prometheus allows 11,000
// points per series).
const maxBackfillSteps = 1000

var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// withDefaults fills zero fields from DefaultConfig and derived defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Name == "" {
		c.Name = d.Name
	}
	setDur(&c.Refresh, d.Refresh)
	setDur(&c.Window, d.Window)
	setDur(&c.ScrapeInterval, d.ScrapeInterval)
	setDur(&c.Delay, d.Delay)
	setDur(&c.MaxLag, d.MaxLag)
	setDur(&c.HTTP.Timeout, d.HTTP.Timeout)
	c.HTTP = c.HTTP.WithDefaults()
	setDur(&c.DiscoveryInterval, d.DiscoveryInterval)
	if c.HistogramStep == 0 {
		c.HistogramStep = max(minHistogramStep, c.ScrapeInterval)
	}
	if c.Backfill == 0 {
		c.Backfill = max(c.Window, c.HistogramStep)
	}
	if c.Quantile == 0 {
		c.Quantile = d.Quantile
	}
	if c.Concurrency == 0 {
		c.Concurrency = d.Concurrency
	}
	if c.MaxEndpoints == 0 {
		c.MaxEndpoints = d.MaxEndpoints
	}
	if len(c.ReplicaLabels) == 0 {
		c.ReplicaLabels = d.ReplicaLabels
	}
	if c.RoleLabels == nil {
		c.RoleLabels = d.RoleLabels
	}
	return c
}

func setDur(p *time.Duration, def time.Duration) {
	if *p == 0 {
		*p = def
	}
}

// validate checks a config that has its defaults.
func (c Config) validate() (*url.URL, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus URL must be http(s)://host[:port][/prefix], got %q", redactURLString(c.URL))
	}
	if p := strings.TrimSuffix(u.Path, "/"); strings.Contains(p+"/", "/api/v1/") || strings.HasSuffix(p, "/metrics") {
		// ttftop adds /api/v1/…; an engine's or exporter's /metrics is
		// not a store (scrape it with --scrape instead).
		return nil, fmt.Errorf("prometheus URL %q: give the store's API root (http(s)://host[:port][/prefix], e.g. http://prom:9090), without /api/v1/… or /metrics (an engine's /metrics is read with --scrape)",
			redactURLString(c.URL))
	}
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"refresh", c.Refresh}, {"window", c.Window}, {"scrape interval", c.ScrapeInterval},
		{"histogram step", c.HistogramStep}, {"timeout", c.HTTP.Timeout},
		{"discovery interval", c.DiscoveryInterval}, {"backfill", c.Backfill}, {"max lag", c.MaxLag},
	} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", d.name, d.v))
		}
	}
	if c.Delay < 0 {
		errs = append(errs, fmt.Errorf("delay must not be negative, got %s", c.Delay))
	}
	if c.HistogramStep < time.Second || c.HistogramStep%time.Millisecond != 0 {
		errs = append(errs, fmt.Errorf("histogram step %s must be a whole number of milliseconds, at least 1s", c.HistogramStep))
	}
	if c.Backfill < c.HistogramStep || c.Backfill > maxBackfillSteps*c.HistogramStep {
		errs = append(errs, fmt.Errorf("backfill %s must be between 1 and %d histogram steps (%s)", c.Backfill, maxBackfillSteps, c.HistogramStep))
	}
	if c.MaxLag < c.HistogramStep || c.MaxLag < c.Delay || c.MaxLag > maxBackfillSteps*c.HistogramStep {
		errs = append(errs, fmt.Errorf("max lag %s must be at least the histogram step and the delay, and at most %d histogram steps (%s)", c.MaxLag, maxBackfillSteps, c.HistogramStep))
	}
	if math.IsNaN(c.Quantile) || c.Quantile <= 0 || c.Quantile >= 1 {
		errs = append(errs, fmt.Errorf("quantile must be in (0, 1), got %v", c.Quantile))
	}
	if c.Concurrency < 1 || c.MaxEndpoints < 1 {
		errs = append(errs, errors.New("concurrency and max endpoints must be positive"))
	}
	reserved := map[string]bool{"le": true, modelNameLabel: true, modelLabel: true, endpointLabel: true, engineTag: true, partTag: true,
		scaleTag: true, derivedTag: true, meanTag: true}
	for _, l := range c.GroupBy {
		if !labelNameRE.MatchString(l) || reserved[l] {
			errs = append(errs, fmt.Errorf("group-by label %q is not a plain label name or is reserved", l))
		}
	}
	for _, l := range c.ReplicaLabels {
		if !labelNameRE.MatchString(l) || reserved[l] {
			errs = append(errs, fmt.Errorf("replica label %q is not a plain label name or is reserved", l))
		}
	}
	for _, l := range c.RoleLabels {
		if !labelNameRE.MatchString(l) || reserved[l] {
			errs = append(errs, fmt.Errorf("role label %q is not a plain label name or is reserved", l))
		}
	}
	for sig, q := range c.Queries {
		if q == "" {
			errs = append(errs, fmt.Errorf("query for %s is empty", sig))
		}
	}
	if err := validateAuth(c.HTTP, c.Basic); err != nil {
		errs = append(errs, fmt.Errorf("auth: %w", err))
	}
	return u, errors.Join(errs...)
}

// redactURLString hides a password in a URL for messages.
func redactURLString(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Redacted()
}
