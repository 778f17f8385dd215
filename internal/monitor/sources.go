package monitor

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/sources/promql"
	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

// AddConfig adds every source a config describes: a probe and a scrape
// of its /metrics per endpoint (one scrape per metrics URL),
// PromQL servers, dcgm-exporters with the endpoints' GPU maps, and
// nvidia-smi.
func (m *Monitor) AddConfig(c *config.Config) error {
	for _, ep := range c.Endpoints {
		if err := m.addEndpointProbe(ep); err != nil {
			return err
		}
	}
	for _, sc := range scrapeGroups(c.Endpoints) {
		m.addFor(scrapeOwner(c.Endpoints, sc), scrapeRunner(sc, m))
	}
	for _, p := range c.Prometheus {
		if err := m.AddPromQL(c.PromQL(p)); err != nil {
			return fmt.Errorf("prometheus %s: %w", httpclient.Redact(p.URL), err)
		}
	}
	targets, joinable := mappedTargets(c)
	for _, d := range c.DCGM {
		dc := d.Config(targets)
		if joinable {
			// Quick mode: the models found on a host get that host's GPUs;
			// GPUs nothing claims are said as a warning, not a phantom row.
			dc.EmitUnmapped = false
			dc.MoreTargets = m.gpus.targetsFor(cmp.Or(d.Node, d.Via, hostOf(d.URL)))
		}
		m.AddDCGM(dc)
	}
	if c.NvidiaSMI {
		sc := gpu.SMIConfig{Targets: targets, EmitUnmapped: len(targets) == 0}
		if joinable {
			// Quick mode: nvidia-smi's GPUs are this machine's, so the
			// models served from loopback (or this host's name) get them.
			sc.EmitUnmapped = false
			sc.MoreTargets = m.gpus.targetsFor("localhost")
		}
		m.AddNvidiaSMI(sc)
	}
	return nil
}

// AddProbe probes one endpoint. With no model given, every model the
// server lists on /v1/models gets its own probe (quick mode), named
// "<prefix>/<model>" (prefix "" = host:port). A server that cannot be
// listed yet is an outage under its own name (prefix, or host:port):
// failed probes every interval, so it alerts, until it lists its models;
// then that placeholder retires and each model is probed.
func (m *Monitor) AddProbe(o probe.Options, prefix string) error {
	r, err := m.probeRunner(o, prefix)
	if err != nil {
		return err
	}
	m.add(r.name, r.run)
	return nil
}

// probeRunner is AddProbe's loop, its options checked.
func (m *Monitor) probeRunner(o probe.Options, prefix string) (runner, error) {
	if _, err := probe.New(o); err != nil { // validate now: a clear error at start-up
		return runner{}, err
	}
	return runner{name: "probe:" + o.URL, run: func(ctx context.Context) error {
		if o.Model != "" {
			return m.runProbe(ctx, o)
		}
		models, ok := m.discover(ctx, o, prefix)
		if !ok {
			return nil
		}
		if len(models) == 0 {
			return m.runProbe(ctx, o) // no list to follow: the probe's own discovery decides
		}
		done := make(chan error, len(models))
		for _, md := range models {
			model := md.ID
			oo := o
			oo.Model, oo.AdapterOf = model, md.Parent
			if prefix != "" {
				oo.Name = prefix + "/" + model
			}
			// Guarded apart: the runner's guard does not reach this goroutine.
			go func() {
				done <- m.guarded(ctx, "probe:"+o.URL+" "+model, func(ctx context.Context) error { return m.runProbe(ctx, oo) })
			}()
		}
		for range models {
			<-done
		}
		return nil
	}}, nil
}

// discover lists the server's models, retrying every probe interval until
// it can; ok is false when ctx ended first. Each failed attempt is a failed
// probe of the server's placeholder endpoint, retired once the list comes.
func (m *Monitor) discover(ctx context.Context, o probe.Options, prefix string) (models []probe.Model, ok bool) {
	p, err := probe.New(o)
	if err != nil {
		return nil, true
	}
	defer p.Close()
	timeout, interval := cmp.Or(o.Timeout, probe.DefaultTimeout), cmp.Or(o.Interval, probe.DefaultInterval)
	ep := telemetry.Endpoint{Name: cmp.Or(prefix, p.Host()), BaseURL: p.URL(), Labels: map[string]string{"api": string(p.API())}}
	for k, v := range o.Labels {
		ep.Labels[k] = sanitize.Text(v)
	}
	source := telemetry.SourceProbe.At(p.URL())
	failures := 0
	for {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		listed, err := p.Discover(dctx)
		cancel()
		if ctx.Err() != nil {
			return nil, false
		}
		if err == nil {
			if failures > 0 {
				m.Observe(telemetry.Observation{Kind: telemetry.KindRetire, At: time.Now(), Endpoint: ep.Name, Source: source,
					Err: "reachable again: each model it lists is probed on its own"})
			}
			return listed, true
		}
		failures++
		now := time.Now()
		for _, ob := range probe.DiscoveryFailure(err, ep, source, interval, now) {
			m.Observe(ob)
		}
		m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: now, Endpoint: ep.Name, Source: source, Interval: interval,
			Status: &telemetry.SourceStatus{Name: ep.Name, Kind: telemetry.SourceProbe, URL: p.URL(), State: telemetry.Error,
				Err: sanitize.Text(err.Error()), Failures: failures, Description: "listing the server's models"}})
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
	}
}

func (m *Monitor) runProbe(ctx context.Context, o probe.Options) error {
	if p, err := probe.New(o); err == nil && o.Model != "" {
		m.gpus.add(p.Endpoint().Name, joinHost(o))
		m.noteProbed(p.Endpoint().Name, o)
		p.Close()
	}
	r, err := probe.NewRunner(o, m)
	if err != nil {
		m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: time.Now(), Source: telemetry.SourceProbe.At(o.URL),
			Status: &telemetry.SourceStatus{Name: "probe " + o.URL, Kind: telemetry.SourceProbe, URL: o.URL, State: telemetry.Error, Err: sanitize.Text(err.Error())}})
		return nil
	}
	return r.Run(ctx)
}

// AddScrape scrapes an engine's /metrics directly.
func (m *Monitor) AddScrape(c scrape.Config) {
	r := scrapeRunner(c, m)
	m.add(r.name, r.run)
}

func scrapeRunner(c scrape.Config, sink telemetry.Sink) runner {
	return runner{name: "scrape:" + c.URL, run: scrape.New(c, sink).Run}
}

// AddPromQL queries a Prometheus-compatible server for a fleet.
func (m *Monitor) AddPromQL(c promql.Config) error {
	s, err := promql.New(c, m)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.followers = append(m.followers, s)
	m.mu.Unlock()
	m.add("promql:"+c.URL, func(ctx context.Context) error {
		defer s.Close()
		return s.Run(ctx)
	})
	return nil
}

// AddDCGM scrapes a dcgm-exporter.
func (m *Monitor) AddDCGM(c gpu.Config) {
	d := gpu.New(c, m)
	m.add("dcgm:"+c.URL, d.Run)
}

// AddHostNvidiaSMI reads a tunnelled host's GPUs with its nvidia-smi,
// run by exec (over the SSH connection), joined to the endpoints reached
// through via; host names them.
func (m *Monitor) AddHostNvidiaSMI(via, host string, exec gpu.Exec) {
	s := gpu.NewSMI(gpu.SMIConfig{Host: host, Exec: exec, MoreTargets: m.gpus.targetsFor(via)}, m)
	m.add("nvidia-smi:"+host, s.Run)
}

// AddNvidiaSMI reads local GPUs with nvidia-smi.
func (m *Monitor) AddNvidiaSMI(c gpu.SMIConfig) {
	s := gpu.NewSMI(c, m)
	m.add("nvidia-smi", s.Run)
}
