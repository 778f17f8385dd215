package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
	"github.com/ttftop/ttftop/exporter"
	"github.com/ttftop/ttftop/internal/config"
)

func exporterCommand() command {
	return command{name: "exporter", summary: "run probes continuously and serve them as Prometheus metrics", usage: exporterUsage, bind: runExporter}
}

const exporterUsage = `ttftop exporter URL [URL...] [--listen 127.0.0.1:9464] [flags]
       ttftop exporter --config FILE [flags]

Probes the endpoints continuously and serves /metrics (ttftop_probe_*
histograms with vLLM-compatible buckets, request counters, success, and
the SLO burn rates and alert states) and /healthz. With --webhook or
--on-alert it also notifies; delivery failures are said on stderr.`

func runExporter(fs *pflag.FlagSet) runFunc {
	var sf sourceFlags
	sf.bind(fs)
	listen := fs.String("listen", "127.0.0.1:9464", "address to serve /metrics and /healthz on (loopback by default; :9464 for every interface)")
	return func(ctx context.Context, urls []string, stdout, stderr io.Writer) error {
		// The exporter exports what its probes measure; engines' own metrics
		// are better scraped by Prometheus directly.
		sf.noScrape = true
		m, c, err := sf.open(urls, stderr)
		if err != nil {
			return err
		}
		probed, probeTimeout := probesOf(c)
		exp := exporter.New(exporter.Options{Alerts: m.SLO, Diagnosis: m.Diagnosis, NoProbes: !probed, ProbeTimeout: probeTimeout})
		m.AddSink(exp)
		return runMonitor(ctx, m, c.Notify, stderr, func(ctx context.Context) error {
			fmt.Fprintf(stderr, "ttftop exporter: serving /metrics and /healthz on %s\n", *listen)
			return exp.Serve(ctx, *listen)
		})
	}
}

// probesOf reports whether any endpoint of c is probed (without probes
// the exporter's health follows its other sources) and the largest request
// timeout of those probes: the longest a probe of a hung target runs
// before it reports, which /healthz must wait out (zero, no probes: the
// exporter's default). Every endpoint has its Probe once c is completed.
func probesOf(c *config.Config) (probed bool, longestTimeout time.Duration) {
	for _, ep := range c.Endpoints {
		if !ep.Probe.Disabled {
			probed = true
			longestTimeout = max(longestTimeout, ep.Probe.Timeout.D())
		}
	}
	return probed, longestTimeout
}
