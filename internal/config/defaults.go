package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui"
)

// Every default belongs to the package whose behaviour it sets: the
// probe's to sources/probe, PromQL's to sources/promql, the GPU sources'
// to sources/gpu, the view's to tui and themes. The file and the flags
// read them from there, so a setting left out means the same everywhere.

func (c *Config) applyDefaults() {
	if c.Theme == "" {
		c.Theme = themes.DefaultName
	}
	if c.Refresh == 0 {
		c.Refresh = slo.Duration(tui.DefaultRefresh)
	}
	if c.Window == 0 {
		c.Window = slo.Duration(tui.DefaultWindow)
	}
	if c.FPS == 0 {
		c.FPS = tui.DefaultFPS
	}
	c.Probe.Fill(probe.DefaultSettings())
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		if e.Probe == nil {
			p := c.Probe
			e.Probe = &p
		} else {
			e.Probe.Fill(c.Probe)
		}
	}
	for i := range c.Prometheus {
		c.Prometheus[i].Fill(promql.DefaultSettings())
	}
	for i := range c.DCGM {
		c.DCGM[i].Fill(gpu.DefaultSettings())
	}
}

func (c *Config) validate() error {
	if errs := c.problems(); len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// problems are the config's mistakes, each with its line when it came
// from a file.
func (c *Config) problems() []string {
	var errs []string
	bad := func(msg string, path ...any) {
		if msg, ok := c.at(msg, path...); ok {
			errs = append(errs, msg)
		}
	}
	seen := map[string]bool{}
	if c.Probe.HasBasicAuth() {
		// Endpoints without a probe block inherit it: one error is enough.
		bad("probe: "+basicAuthRefused, "probe", basicAuthKey(c.Probe.Auth))
	}
	for i, e := range c.Endpoints {
		if err := checkURL(e.URL); err != nil {
			bad(fmt.Sprintf("endpoints[%d] (%s): url: %v", i, e.Prefix(), err), "endpoints", i, "url")
		}
		key := e.Prefix() + "/" + e.Model
		if seen[key] {
			bad(fmt.Sprintf("endpoints[%d]: duplicate endpoint %q", i, key), "endpoints", i)
		}
		seen[key] = true
		if e.Labels != nil {
			bad(fmt.Sprintf("endpoints[%d] (%s): labels are not supported: nothing would attach them to the endpoint; remove them", i, e.Prefix()),
				"endpoints", i, "labels")
		}
		if e.Probe.Concurrency < 0 || e.Probe.MaxTokens < 0 {
			bad(fmt.Sprintf("endpoints[%d] (%s): probe concurrency and max_tokens must be positive", i, e.Prefix()), "endpoints", i, "probe")
		}
		if e.Probe.Interval.D() < 100*time.Millisecond {
			bad(fmt.Sprintf("endpoints[%d] (%s): probe interval %v is below the 100ms floor", i, e.Prefix(), e.Probe.Interval.D()),
				"endpoints", i, "probe", "interval")
		}
		if e.Probe.HasBasicAuth() && !c.Probe.HasBasicAuth() {
			bad(fmt.Sprintf("endpoints[%d] (%s): probe: %s", i, e.Prefix(), basicAuthRefused), "endpoints", i, "probe", basicAuthKey(e.Probe.Auth))
		}
	}
	for i, p := range c.Prometheus {
		if err := checkURL(p.URL); err != nil {
			bad(fmt.Sprintf("prometheus[%d]: url: %v", i, err), "prometheus", i, "url")
		}
	}
	errs = append(errs, c.weightsErrors()...)
	for i, d := range c.DCGM {
		if err := checkURL(d.URL); err != nil {
			bad(fmt.Sprintf("dcgm[%d]: url: %v", i, err), "dcgm", i, "url")
		}
		if d.HasBasicAuth() {
			bad(fmt.Sprintf("dcgm[%d]: %s", i, basicAuthRefused), "dcgm", i, basicAuthKey(d.Auth))
		}
	}
	if w := c.Notify.Webhook; w != nil && w.HasBasicAuth() {
		bad("notify: webhook: "+basicAuthRefused, "notify", "webhook", basicAuthKey(w.Auth))
	}
	for i, s := range c.SLOs {
		if _, err := s.Objective(); err != nil {
			bad(fmt.Sprintf("slos[%d] (%s): %v", i, strings.TrimSpace(s.Name), strings.ReplaceAll(err.Error(), "\n", "; ")), "slos", i)
		}
	}
	if c.FPS < 1 || c.FPS > tui.MaxFPS {
		bad(fmt.Sprintf("fps %d is outside 1–%d", c.FPS, tui.MaxFPS), "fps")
	}
	return errs
}

// basicAuthRefused explains a username or password where only bearer
// tokens and headers are sent.
const basicAuthRefused = "username, password_env and password_file (basic auth) are only sent to prometheus servers; " +
	"use bearer_token_env, bearer_token_file or headers here"

// basicAuthKey is the basic-auth key set, to find its line.
func basicAuthKey(a httpclient.Auth) string {
	switch {
	case a.Username != "":
		return "username"
	case a.PasswordEnv != "":
		return "password_env"
	}
	return "password_file"
}

func checkURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("missing")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: scheme must be http or https", u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("%s: credentials in URLs are not allowed; use bearer_token_env/password_file", u.Redacted())
	}
	return nil
}
