package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ttftop/ttftop/sources/gpu"
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
		c.Refresh = Duration(tui.DefaultRefresh)
	}
	if c.Window == 0 {
		c.Window = Duration(tui.DefaultWindow)
	}
	if c.FPS == 0 {
		c.FPS = tui.DefaultFPS
	}
	c.Probe.fill(Probe{Interval: Duration(probe.DefaultInterval), Concurrency: probe.DefaultConcurrency,
		MaxTokens: probe.DefaultMaxTokens, Prompt: probe.DefaultPrompt, Timeout: Duration(probe.DefaultTimeout),
		StallTimeout: Duration(probe.DefaultStallTimeout)})
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		if e.Probe == nil {
			p := c.Probe
			e.Probe = &p
		} else {
			e.Probe.fill(c.Probe)
		}
	}
	for i := range c.Prometheus {
		p := &c.Prometheus[i]
		if p.Interval == 0 {
			p.Interval = Duration(promql.DefaultRefresh)
		}
		if p.Window == 0 {
			p.Window = Duration(promql.DefaultWindow)
		}
		if p.Timeout == 0 {
			p.Timeout = Duration(promql.DefaultQueryTimeout)
		}
	}
	for i := range c.DCGM {
		if c.DCGM[i].Interval == 0 {
			c.DCGM[i].Interval = Duration(gpu.DefaultInterval)
		}
	}
}

// fill sets p's zero fields from def.
func (p *Probe) fill(def Probe) {
	if p.Interval == 0 {
		p.Interval = def.Interval
	}
	if p.Concurrency == 0 {
		p.Concurrency = def.Concurrency
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = def.MaxTokens
	}
	if p.Prompt == "" && p.PromptFile == "" {
		p.Prompt, p.PromptFile = def.Prompt, def.PromptFile
	}
	if p.Timeout == 0 {
		p.Timeout = def.Timeout
	}
	if p.StallTimeout == 0 {
		p.StallTimeout = def.StallTimeout
	}
	if p.Seed == 0 {
		p.Seed = def.Seed
	}
	if p.BearerTokenEnv == "" && p.BearerTokenFile == "" {
		p.BearerTokenEnv, p.BearerTokenFile = def.BearerTokenEnv, def.BearerTokenFile
	}
	if p.Headers == nil {
		p.Headers = def.Headers
	}
	if p.CAFile == "" {
		p.CAFile = def.CAFile
	}
	p.Insecure = p.Insecure || def.Insecure
	p.NoUsage = p.NoUsage || def.NoUsage
	p.ContinuousUsage = p.ContinuousUsage || def.ContinuousUsage
}

// Prefix is the first part of the endpoint keys this entry yields,
// "<prefix>/<model>": its name, else the URL's host:port. Probes and
// scrapes of the same server use it, so their data meet on one endpoint.
func (e Endpoint) Prefix() string {
	if e.Name != "" {
		return e.Name
	}
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		return u.Host
	}
	return e.URL
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
	if c.Probe.hasBasicAuth() {
		// Endpoints without a probe block inherit it: one error is enough.
		bad("probe: "+basicAuthRefused, "probe", c.Probe.basicAuthKey())
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
		if e.Probe.hasBasicAuth() && !c.Probe.hasBasicAuth() {
			bad(fmt.Sprintf("endpoints[%d] (%s): probe: %s", i, e.Prefix(), basicAuthRefused), "endpoints", i, "probe", e.Probe.basicAuthKey())
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
		if d.hasBasicAuth() {
			bad(fmt.Sprintf("dcgm[%d]: %s", i, basicAuthRefused), "dcgm", i, d.basicAuthKey())
		}
	}
	if w := c.Notify.Webhook; w != nil && w.hasBasicAuth() {
		bad("notify: webhook: "+basicAuthRefused, "notify", "webhook", w.basicAuthKey())
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

func (a Auth) hasBasicAuth() bool {
	return a.Username != "" || a.PasswordEnv != "" || a.PasswordFile != ""
}

// basicAuthKey is the basic-auth key set, to find its line.
func (a Auth) basicAuthKey() string {
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
