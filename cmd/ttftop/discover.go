package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/discover"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
)

// discoverFlags control what a monitoring command does when it is given
// no target: look for this machine's engines (internal/discover).
type discoverFlags struct {
	off   bool
	ports string
	found *discover.Result // what the last discovery found, to say on stderr
	// machine is what discovery reads (zero: this machine's /proc,
	// nvidia-smi on PATH, :9400); tests point it at an empty machine.
	machine discover.Options
}

func (d *discoverFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&d.off, "no-discover", false, "with no target, fail instead of looking for this machine's engines")
	fs.StringVar(&d.ports, "discover-ports", joinInts(discover.DefaultPorts()), "comma-separated ports tried on loopback when no target is given, besides the engine processes' own")
}

// noTargetUsage is the message when nothing was given and nothing found.
const noTargetUsage = "give a URL, ssh://[user@]host[:port], --prometheus, --scrape, --dcgm or --config (try 'ttftop demo')"

// portList parses --discover-ports.
func (d *discoverFlags) portList() ([]int, error) {
	out := []int{} // empty, not nil: "" scans no port

	for _, s := range strings.Split(d.ports, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			return nil, usagef("--discover-ports: %q is not a port", s)
		}
		out = append(out, p)
	}
	return out, nil
}

// discoverInto looks for this machine's engines and adds what it finds
// to c: an endpoint per LLM server (probe defaults p; its /metrics
// scraped when it has one), a dcgm-exporter, nvidia-smi. Finding no LLM
// server and no GPU is a usage error that says what was looked at.
func (d *discoverFlags) discoverInto(c *config.Config, p probe.Settings, model, api string, noScrape bool) error {
	ports, err := d.portList()
	if err != nil {
		return err
	}
	// Bounded by the fingerprint timeout: no cancellation needed.
	o := d.machine
	o.Ports = ports
	r, err := discover.Local(context.Background(), o)
	if err != nil {
		return err
	}
	d.found = &r
	if len(r.Endpoints) == 0 && r.DCGM == "" && !r.NvidiaSMI {
		return usagef("nothing to monitor: no target given and no LLM server found on this machine (looked at %s); %s", r.Looked, noTargetUsage)
	}
	c.Endpoints = append(c.Endpoints, foundEndpoints(r, p, model, api, noScrape)...)
	if r.DCGM != "" {
		c.DCGM = append(c.DCGM, gpu.Settings{URL: r.DCGM})
	}
	c.NvidiaSMI = c.NvidiaSMI || r.NvidiaSMI
	return nil
}

// foundEndpoints are the config endpoints of the LLM servers found: probe
// defaults p, their /metrics scraped when they have one.
func foundEndpoints(r discover.Result, p probe.Settings, model, api string, noScrape bool) []config.Endpoint {
	var out []config.Endpoint
	for _, f := range r.Endpoints {
		pp := p
		ep := config.Endpoint{URL: f.URL, Model: model, API: api, Probe: &pp, Found: f.How}
		if ep.API == "" {
			ep.API = string(f.API)
		}
		if noScrape || !f.Metrics {
			ep.Metrics = "off"
		}
		out = append(out, ep)
	}
	return out
}

// report says on w what discovery found and left alone.
func (d *discoverFlags) report(w io.Writer) {
	if d.found == nil {
		return
	}
	for _, line := range d.found.Describe() {
		fmt.Fprintf(w, "ttftop: %s\n", line)
	}
	if len(d.found.Endpoints) == 0 && (d.found.DCGM != "" || d.found.NvidiaSMI) {
		fmt.Fprintf(w, "ttftop: no LLM server found on this machine (looked at %s): showing its GPUs only\n", d.found.Looked)
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
