package monitor

import (
	"context"
	"time"

	"github.com/tokentop/tokentop/sanitize"
	"github.com/tokentop/tokentop/sources/gpu"
	"github.com/tokentop/tokentop/sources/probe"
	"github.com/tokentop/tokentop/sources/promql"
	"github.com/tokentop/tokentop/sources/scrape"
	"github.com/tokentop/tokentop/telemetry"
)

// AddProbe probes one endpoint. With no model given, every model the
// server lists on /v1/models gets its own probe (quick mode), named
// "<prefix>/<model>" (prefix "" = host:port); a server that cannot be
// reached yet is retried by the probe itself.
func (m *Monitor) AddProbe(o probe.Options, prefix string) error {
	if _, err := probe.New(o); err != nil { // validate now: a clear error at start-up
		return err
	}
	m.add("probe:"+o.URL, func(ctx context.Context) error {
		if o.Model != "" {
			return m.runProbe(ctx, o)
		}
		models := m.discover(ctx, o)
		if len(models) == 0 {
			return m.runProbe(ctx, o) // its own discovery retries and reports
		}
		done := make(chan error, len(models))
		for _, model := range models {
			oo := o
			oo.Model = model
			if prefix != "" {
				oo.Name = prefix + "/" + model
			}
			go func() { done <- m.runProbe(ctx, oo) }()
		}
		for range models {
			<-done
		}
		return nil
	})
	return nil
}

// discover lists the server's models once; on failure it returns nil and
// the probe's own discovery keeps retrying and reporting.
func (m *Monitor) discover(ctx context.Context, o probe.Options) []string {
	p, err := probe.New(o)
	if err != nil {
		return nil
	}
	defer p.Close()
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = probe.DefaultTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	listed, err := p.Discover(dctx)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(listed))
	for _, md := range listed {
		names = append(names, md.ID)
	}
	return names
}

func (m *Monitor) runProbe(ctx context.Context, o probe.Options) error {
	r, err := probe.NewRunner(o, m)
	if err != nil {
		m.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: time.Now(), Source: "probe:" + o.URL,
			Status: &telemetry.SourceStatus{Name: "probe " + o.URL, Kind: "probe", URL: o.URL, State: telemetry.Error, Err: sanitize.Text(err.Error())}})
		return nil
	}
	return r.Run(ctx)
}

// AddScrape scrapes an engine's /metrics directly.
func (m *Monitor) AddScrape(c scrape.Config) {
	s := scrape.New(c, m)
	m.add("scrape:"+c.URL, s.Run)
}

// AddPromQL queries a Prometheus-compatible server for a fleet.
func (m *Monitor) AddPromQL(c promql.Config) error {
	s, err := promql.New(c, m)
	if err != nil {
		return err
	}
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

// AddNvidiaSMI reads local GPUs with nvidia-smi.
func (m *Monitor) AddNvidiaSMI(c gpu.SMIConfig) {
	s := gpu.NewSMI(c, m)
	m.add("nvidia-smi", s.Run)
}
