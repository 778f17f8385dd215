package config

import (
	"strings"
	"testing"
	"time"
)

func TestExampleFileParses(t *testing.T) {
	c, err := Load("../examples/tokentop.yaml")
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
	if c.Prometheus[0].Headers["X-Scope-OrgID"] != "inference" || c.Prometheus[0].Timeout.D() != DefaultPromTimeout {
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
	if c.Theme != DefaultTheme || c.Window.D() != DefaultWindow || c.FPS != DefaultFPS {
		t.Errorf("defaults: %+v", c)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"28d": 28 * 24 * time.Hour, "1d12h": 36 * time.Hour, "50ms": 50 * time.Millisecond, "0.5d": 12 * time.Hour} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
}
