package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/exporter"
	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui"
)

// Every default is asserted once here, read from the package that owns
// it, with the value it has always had: a file that leaves a setting out
// gets the owner's default, the library (probe.Options, promql.Config,
// gpu.Config, tui.Options) fills the same one, and a default written a
// second time somewhere (or changed by accident) fails. The flags' side
// is cmd/ttftop's TestFlagDefaultsAreTheOwners'.
func TestDefaultsAreTheirOwners(t *testing.T) {
	c, err := config.Parse(strings.NewReader("endpoints:\n  - url: http://a:8000\n" +
		"prometheus:\n  - url: http://prom:9090\ndcgm:\n  - url: http://a:9400\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, prom, dcgm := c.Endpoints[0].Probe, c.Prometheus[0], c.DCGM[0]
	lib := promql.DefaultConfig()
	for _, d := range []struct {
		what             string
		file, owner, was any
	}{
		{"probe interval", p.Interval.D(), probe.DefaultInterval, 10 * time.Second},
		{"exporter's probe interval", p.Interval.D(), exporter.DefaultProbeInterval, 10 * time.Second},
		{"probe concurrency", p.Concurrency, probe.DefaultConcurrency, 1},
		{"probe max tokens", p.MaxTokens, probe.DefaultMaxTokens, 64},
		{"probe prompt", p.Prompt, probe.DefaultPrompt, "short"},
		{"probe request timeout", p.Timeout.D(), probe.DefaultTimeout, 60 * time.Second},
		{"exporter's probe timeout", p.Timeout.D(), exporter.DefaultProbeTimeout, 60 * time.Second},
		{"probe stall timeout", p.StallTimeout.D(), probe.DefaultStallTimeout, 15 * time.Second},
		{"prometheus interval", prom.Interval.D(), lib.Refresh, 5 * time.Second},
		{"prometheus window", prom.Window.D(), lib.Window, 5 * time.Minute},
		{"prometheus timeout", prom.Timeout.D(), lib.HTTP.Timeout, 10 * time.Second},
		{"prometheus max lag", promql.DefaultConfig().MaxLag, promql.DefaultMaxLag, 5 * time.Minute},
		{"dcgm interval", dcgm.Interval.D(), gpu.Config{URL: "http://a"}.WithDefaults().Interval, time.Second},
		{"nvidia-smi interval", dcgm.Interval.D(), gpu.SMIConfig{}.WithDefaults().Interval, time.Second},
		{"theme", c.Theme, themes.DefaultName, "dark"},
		{"refresh", c.Refresh.D(), tui.DefaultRefresh, time.Second},
		{"window", c.Window.D(), tui.DefaultWindow, 5 * time.Minute},
		{"fps", c.FPS, tui.DefaultFPS, 10},
	} {
		if d.file != d.owner || d.owner != d.was {
			t.Errorf("%s: %v from a file, %v from its owner, %v before", d.what, d.file, d.owner, d.was)
		}
	}
	if probe.BuiltinPrompts()[p.Prompt] == "" {
		t.Errorf("default prompt %q is not a built-in prompt", p.Prompt)
	}
}
