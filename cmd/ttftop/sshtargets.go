package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/discover"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sshhost"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
)

// sshFlags control ssh:// targets: another host's engines, discovered
// and measured through one SSH connection (internal/sshhost).
type sshFlags struct {
	acceptNew bool
	hosts     []*sshhost.Host
	results   map[string]discover.Result // by target, to say on stderr
	// dcgmPort is where a host's dcgm-exporter is looked for (0: 9400);
	// tests, which cannot take :9400, set another.
	dcgmPort int
}

func (s *sshFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&s.acceptNew, "ssh-accept-new", false, "ssh:// targets: add an unknown host key to known_hosts, as ssh's StrictHostKeyChecking=accept-new (a changed key is always refused)")
}

// sshSetup bounds connecting to a host and discovering its engines.
const sshSetup = 30 * time.Second

// splitSSH separates the ssh:// targets from the URLs.
func splitSSH(args []string) (ssh, urls []string) {
	for _, a := range args {
		if strings.HasPrefix(a, "ssh://") {
			ssh = append(ssh, a)
		} else {
			urls = append(urls, a)
		}
	}
	return ssh, urls
}

// addHosts connects to each ssh:// target, discovers its engines there
// and adds them to c, reached through the connection.
func (s *sshFlags) addHosts(c *config.Config, targets []string, ports []int, p probe.Settings, model, api string, noScrape bool) error {
	s.results = map[string]discover.Result{}
	for _, arg := range targets {
		t, err := sshhost.ParseTarget(arg)
		if err != nil {
			return usagef("%v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), sshSetup)
		h, r, err := openHost(ctx, t, sshhost.Options{AcceptNew: s.acceptNew}, ports, s.dcgmPort)
		cancel()
		if err != nil {
			return err
		}
		s.hosts = append(s.hosts, h)
		s.results[t.String()] = r
		for _, ep := range foundEndpoints(r, p, model, api, noScrape) {
			u, err := url.Parse(ep.URL)
			if err != nil {
				return err
			}
			ep.Name = t.Alias + ":" + u.Port()
			ep.Found += " on " + t.Alias
			ep.Via, ep.Dial = t.String(), h.Dial
			c.Endpoints = append(c.Endpoints, ep)
		}
		if r.DCGM != "" {
			c.DCGM = append(c.DCGM, gpu.Settings{URL: r.DCGM, Via: t.String(), Dial: h.Dial})
		}
	}
	return nil
}

// openHost connects and runs discovery on the host.
func openHost(ctx context.Context, t sshhost.Target, o sshhost.Options, ports []int, dcgmPort int) (*sshhost.Host, discover.Result, error) {
	h, err := sshhost.Open(ctx, t, o)
	if err != nil {
		return nil, discover.Result{}, err
	}
	m, err := h.ReadMachine(ctx)
	if err != nil {
		_ = h.Close()
		return nil, discover.Result{}, err
	}
	r, err := discover.FromMachine(ctx, m, discover.Options{Dial: h.Dial, Ports: ports, DCGMPort: dcgmPort})
	if err != nil {
		_ = h.Close()
		return nil, discover.Result{}, err
	}
	return h, r, nil
}

// addTunnels reports each host's connection as a source, and reads its
// GPUs with its nvidia-smi when it has one.
func (s *sshFlags) addTunnels(m *monitor.Monitor) {
	for _, h := range s.hosts {
		t := h.Target()
		m.AddTunnel(h, t.String())
		if s.results[t.String()].NvidiaSMI {
			m.AddHostNvidiaSMI(t.String(), t.Alias, h.Start)
		}
	}
}

// report says on w what was found on each host.
func (s *sshFlags) report(w io.Writer) {
	for target, r := range s.results {
		for _, line := range r.Describe() {
			fmt.Fprintf(w, "ttftop: %s: %s\n", target, line)
		}
		if len(r.Endpoints) == 0 {
			fmt.Fprintf(w, "ttftop: %s: no LLM server found (looked at %s)\n", target, r.Looked)
		}
	}
}
