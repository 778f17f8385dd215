package promql

import (
	"cmp"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

// Settings are a PromQL source as a config file writes it (a prometheus:
// entry) and the flags set it; Config makes the source's configuration
// from them, with DefaultConfig's defaults for what they leave unset.
type Settings struct {
	URL     string   `yaml:"url"`
	GroupBy []string `yaml:"group_by"`
	// ReplicaLabels identify one replica of a model (default pod,
	// instance); Models names the model of engines without a model label
	// (TGI, llama.cpp) by job label value (default: the job).
	ReplicaLabels []string          `yaml:"replica_labels"`
	Models        map[string]string `yaml:"models"`
	Window        slo.Duration      `yaml:"window"`
	Interval      slo.Duration      `yaml:"interval"`
	Timeout       slo.Duration      `yaml:"timeout"`
	// MaxLag bounds how long a step that came back empty is asked for
	// again while the store catches up (ingestion delay); default 5m.
	MaxLag  slo.Duration      `yaml:"max_lag"`
	Queries map[string]string `yaml:"queries"`
	// Weights describe the models for the MBU estimate, by model name
	// ("*": any model), as an endpoint's weights do for its scrape.
	Weights         map[string]bandwidth.Weights `yaml:"weights"`
	httpclient.Auth `yaml:",inline"`
}

// DefaultSettings are the settings a prometheus entry leaves unset, as
// the source fills them (DefaultConfig).
func DefaultSettings() Settings {
	d := DefaultConfig()
	return Settings{Interval: slo.Duration(d.Refresh), Window: slo.Duration(d.Window), Timeout: slo.Duration(d.HTTP.Timeout)}
}

// Fill sets s's unset interval, window and timeout from def.
func (s *Settings) Fill(def Settings) {
	s.Interval, s.Window, s.Timeout = cmp.Or(s.Interval, def.Interval), cmp.Or(s.Window, def.Window), cmp.Or(s.Timeout, def.Timeout)
}

// Config is the source's configuration: the settings, their weights as
// MBU models, basic auth when a username is given.
func (s Settings) Config() Config {
	c := Config{URL: s.URL, GroupBy: s.GroupBy, ReplicaLabels: s.ReplicaLabels, Models: s.Models, Window: s.Window.D(),
		Refresh: s.Interval.D(), MaxLag: s.MaxLag.D(), HTTP: s.Auth.Config()}
	c.HTTP.Timeout = s.Timeout.D()
	for model, w := range s.Weights {
		if c.MBU == nil {
			c.MBU = map[string]bandwidth.Model{}
		}
		c.MBU[model] = w.Model()
	}
	if s.Username != "" {
		c.Basic = BasicAuth{User: s.Username, Password: httpclient.SecretSource{Env: s.PasswordEnv, File: s.PasswordFile}}
	}
	if len(s.Queries) > 0 {
		c.Queries = map[telemetry.Signal]string{}
		for k, q := range s.Queries {
			c.Queries[telemetry.Signal(k)] = q
		}
	}
	return c
}
