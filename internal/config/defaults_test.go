package config_test

import (
	"strings"
	"testing"

	"github.com/ttftop/ttftop/exporter"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/probe"
)

// A probe waits the same whether a config file, the flags (which build a
// config) or the library set it up: the probe's and the exporter's
// defaults are config's.
func TestProbeDefaultsAreConfigs(t *testing.T) {
	c, err := config.Parse(strings.NewReader("endpoints:\n  - url: http://a:8000\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Endpoints[0].Probe
	for _, d := range []struct {
		what      string
		file, lib any
	}{
		{"probe interval", p.Interval.D(), probe.DefaultInterval},
		{"exporter's probe interval", p.Interval.D(), exporter.DefaultProbeInterval},
		{"stall timeout", p.StallTimeout.D(), probe.DefaultStallTimeout},
		{"request timeout", p.Timeout.D(), probe.DefaultTimeout},
		{"max tokens", p.MaxTokens, probe.DefaultMaxTokens},
	} {
		if d.file != d.lib {
			t.Errorf("%s: %v from a config, %v from the library", d.what, d.file, d.lib)
		}
	}
}
