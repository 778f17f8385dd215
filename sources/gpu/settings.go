package gpu

import (
	"cmp"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/httpclient"
)

// Settings are a dcgm-exporter as a config file writes it (a dcgm:
// entry) and the flags and discovery set it; Config makes the scraper's
// configuration from them.
type Settings struct {
	URL             string       `yaml:"url"`
	Interval        slo.Duration `yaml:"interval"`
	httpclient.Auth `yaml:",inline"`
	// Via and Dial: the tunnel an exporter found on an ssh:// host is
	// reached through ("ssh://box"; Dial opens its connections).
	Via  string              `yaml:"-"`
	Dial httpclient.DialFunc `yaml:"-"`
	// Node and Transport: an exporter pod found in a Kubernetes cluster,
	// joined to the model pods on its node and reached through the API
	// server's pod proxy (its TLS and credentials).
	Node      string                   `yaml:"-"`
	Transport httpclient.TransportFunc `yaml:"-"`
}

// DefaultSettings are what a dcgm entry leaves unset, as the scraper
// fills it.
func DefaultSettings() Settings { return Settings{Interval: slo.Duration(DefaultInterval)} }

// Fill sets s's unset interval from def.
func (s *Settings) Fill(def Settings) {
	s.Interval = cmp.Or(s.Interval, def.Interval)
}

// Config is the scraper's configuration; targets map its GPUs to
// endpoints, and with none every GPU is reported under its host.
func (s Settings) Config(targets []Target) Config {
	c := Config{URL: s.URL, Interval: s.Interval.D(), HTTP: s.Auth.Config(), Targets: targets, EmitUnmapped: len(targets) == 0, Via: s.Via}
	c.HTTP.Dial, c.HTTP.Transport = s.Dial, s.Transport
	return c
}
