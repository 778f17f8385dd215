package main

import (
	"testing"

	"github.com/ttftop/ttftop/internal/sim"
)

// `sim --demo` serves what `ttftop demo` serves: its models, scenario
// and prefix-cache traffic (without which the prefix-hit figure read "no
// data"), while the flags' addresses and load stay.
func TestSimDemoServesTheDemo(t *testing.T) {
	cfg := sim.Config{Listen: "127.0.0.1:18000", Load: 2}
	useDemo(&cfg)
	d := sim.DemoConfig()
	if len(cfg.Models) != len(d.Models) || len(cfg.Scenario.Events) != len(d.Scenario.Events) {
		t.Errorf("models %d, events %d; want the demo's %d and %d", len(cfg.Models), len(cfg.Scenario.Events), len(d.Models), len(d.Scenario.Events))
	}
	if !cfg.PrefixCaching || cfg.SharedPrefixShare != d.SharedPrefixShare || d.SharedPrefixShare == 0 {
		t.Errorf("prefix caching %v, shared prefixes %v: want the demo's (%v, %v)", cfg.PrefixCaching, cfg.SharedPrefixShare, d.PrefixCaching, d.SharedPrefixShare)
	}
	if cfg.Listen != "127.0.0.1:18000" || cfg.Load != 2 {
		t.Errorf("listen %q, load %d: the flags' must stay", cfg.Listen, cfg.Load)
	}
}
