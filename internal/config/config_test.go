package config

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui"
)

func TestExampleFileParses(t *testing.T) {
	c, err := Load("../../examples/ttftop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Endpoints) != 1 || c.Endpoints[0].Name != "llama-prod" {
		t.Fatalf("endpoints: %+v", c.Endpoints)
	}
	e := c.Endpoints[0]
	if e.Probe.BearerTokenEnv != "LLM_PROD_TOKEN" || e.Probe.Interval.D() != 10*time.Second || e.Probe.MaxTokens != 64 {
		t.Errorf("probe defaults not merged: %+v", e.Probe)
	}
	if c.SLOs[2].Period.D() != 28*24*time.Hour {
		t.Errorf("28d parsed as %v", c.SLOs[2].Period.D())
	}
	if c.Prometheus[0].Headers["X-Scope-OrgID"] != "inference" || c.Prometheus[0].Timeout.D() != promql.DefaultQueryTimeout {
		t.Errorf("prometheus: %+v", c.Prometheus[0])
	}
}

func TestUnknownKeyHasLineNumber(t *testing.T) {
	_, err := Parse(strings.NewReader("theme: dark\nendpoints:\n  - url: http://a:8000\n    modle: x\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), `unknown key "modle"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestValidation(t *testing.T) {
	cases := map[string]string{
		"endpoints:\n  - url: ftp://a\n":                              "scheme must be http",
		"endpoints:\n  - url: http://u:secret@a:8000\n":               "credentials in URLs",
		"endpoints:\n  - url: http://a\n  - url: http://a\n":          "duplicate endpoint",
		"slos:\n  - name: x\n    kind: nope\n    threshold: 1s\n":     "kind \"nope\"",
		"refresh: 5 parsecs\n":                                        "invalid duration",
		"endpoints:\n  - url: http://a\n    probe: {interval: 1ms}\n": "below the 100ms floor",
	}
	for in, want := range cases {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error leaks a credential: %v", err)
		}
	}
}

func TestEmptyConfigGetsDefaults(t *testing.T) {
	c, err := Parse(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if c.Theme != themes.DefaultName || c.Window.D() != tui.DefaultWindow || c.FPS != tui.DefaultFPS {
		t.Errorf("defaults: %+v", c)
	}
}

// A duration means the same in a file as on the command line: the config
// decodes with slo.ParseDuration, which the --slo-* flags use, and both
// refuse negative durations.
func TestDurationsParseLikeTheFlags(t *testing.T) {
	for in, want := range map[string]time.Duration{"28d": 28 * 24 * time.Hour, "1d12h": 36 * time.Hour, "50ms": 50 * time.Millisecond,
		"0.5d": 12 * time.Hour, "2w": 14 * 24 * time.Hour, "1y": 365 * 24 * time.Hour, "1.5s": 1500 * time.Millisecond} {
		c, err := Parse(strings.NewReader("slos:\n  - {kind: ratio, signal: ttft, threshold: 5s, target: 0.99, period: " + in + "}\n"))
		if err != nil {
			t.Errorf("period %s: %v", in, err)
			continue
		}
		if got := c.SLOs[0].Period.D(); got != want {
			t.Errorf("period %s = %v, want %v", in, got, want)
		}
		if flag, err := slo.ParseDuration(in); err != nil || flag != want {
			t.Errorf("--slo-period %s = %v, %v; the file reads %v", in, flag, err, want)
		}
	}
	for _, in := range []string{"-1d", "-5m", "1d-5h", "5 parsecs", "d"} {
		_, err := Parse(strings.NewReader("window: " + in + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("window: %s: err = %v, want an error on line 1", in, err)
		}
		if _, err := slo.ParseDuration(in); err == nil {
			t.Errorf("--slo-window %s accepted", in)
		}
	}
	if _, err := Parse(strings.NewReader("window: -1d\n")); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative window: err = %v, want it called negative", err)
	}
}

// Ratios follow the flag's one rule: "99%" or a fraction below 1; a bare
// 1 is refused as ambiguous (it used to become 1 %).
func TestTargetsParseLikeTheFlags(t *testing.T) {
	for in, want := range map[string]float64{"0.99": 0.99, "99%": 0.99, "99.9%": 0.999, "0.5": 0.5} {
		c, err := Parse(strings.NewReader("slos:\n  - kind: ratio\n    signal: ttft\n    threshold: 5s\n    target: " + in + "\n"))
		if err != nil {
			t.Errorf("target %s: %v", in, err)
			continue
		}
		if got := float64(c.SLOs[0].Target); math.Abs(got-want) > 1e-12 {
			t.Errorf("target %s = %v, want %v", in, got, want)
		}
	}
	for _, in := range []string{"1", "99", "-0.5", "150%"} {
		_, err := Parse(strings.NewReader("slos:\n  - kind: ratio\n    signal: ttft\n    threshold: 5s\n    target: " + in + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 5") {
			t.Errorf("target %s: err = %v, want an error on line 5", in, err)
		}
		if _, err := slo.ParseRatio(in); err == nil {
			t.Errorf("--slo-target %s accepted", in)
		}
	}
}

// An objective the engine could not use is a load error naming its line,
// never dropped with a warning.
func TestInvalidObjectiveIsALoadError(t *testing.T) {
	for in, want := range map[string]string{
		"slos:\n  - name: a\n    percentile: 100\n    signal: ttft\n    threshold: 5s\n":              "line 3: invalid percentile",
		"slos:\n  - name: a\n    signal: ttft\n    threshold: -5s\n":                                  "line 2: slos[0] (a): threshold: negative duration",
		"theme: dark\nslos:\n  - name: b\n    signal: ttft\n    threshold: 5s\n    endpoint: \"[\"\n": "line 3: slos[0] (b): objective b: endpoint pattern",
		"slos:\n  - name: c\n    kind: ratio\n    signal: ttft\n    threshold: 5s\n":                  "line 2: slos[0] (c): objective c: target 0 must be within (0, 1)",
		"slos:\n  - name: d\n    signal: ttft\n":                                                      "line 2: slos[0] (d): threshold is required",
	} {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}

// Keys that nothing would act on are refused with their line.
func TestIgnoredKeysAreRefused(t *testing.T) {
	for in, want := range map[string]string{
		"endpoints:\n  - url: http://a:8000\n    labels: {team: x}\n":                   "line 3: endpoints[0] (a:8000): labels are not supported",
		"probe:\n  username: u\nendpoints:\n  - url: http://a:8000\n":                   "line 2: probe: username, password_env",
		"endpoints:\n  - url: http://a:8000\n    probe:\n      password_env: PW\n":      "line 4: endpoints[0] (a:8000): probe: username",
		"dcgm:\n  - url: http://a:9400\n    password_file: /pw\n":                       "line 3: dcgm[0]: username",
		"notify:\n  webhook:\n    url: http://am:9093/api/v2/alerts\n    username: u\n": "line 4: notify: webhook: username",
	} {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
		if err != nil && strings.Count(err.Error(), "basic auth") > 1 {
			t.Errorf("%q: one mistake reported twice: %v", in, err)
		}
	}
	// Basic auth is what prometheus entries send.
	if _, err := Parse(strings.NewReader("prometheus:\n  - url: http://p:9090\n    username: u\n    password_env: PW\n")); err != nil {
		t.Errorf("prometheus basic auth refused: %v", err)
	}
}

// An entry added after loading (from flags) has no line in the file: its
// error names none rather than a wrong one.
func TestAddedEntryErrorNamesNoLine(t *testing.T) {
	c, err := Parse(strings.NewReader("theme: dark\nendpoints:\n  - url: http://a:8000\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.Endpoints = append(c.Endpoints, Endpoint{URL: "ftp://b"})
	err = c.Complete()
	if err == nil || !strings.HasPrefix(err.Error(), "endpoints[1] (b): url:") {
		t.Errorf("err = %v, want the flag's endpoint without a file line", err)
	}
	c.Endpoints[1].URL = "http://b:8000"
	c.Endpoints[0].Labels = map[string]string{"x": "y"}
	if err := c.Complete(); err == nil || !strings.HasPrefix(err.Error(), "line 3: endpoints[0]") {
		t.Errorf("err = %v, want the file's endpoint on line 3", err)
	}
}
