package monitor

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/gpu"
	"github.com/ttftop/ttftop/sources/probe"
)

// gpuJoin joins endpoints that have no GPU map to the GPUs of their host:
// the models a server lists are known only once it answers, so they are
// registered as the probes find them, and each dcgm scrape reads them.
type gpuJoin struct {
	mu        sync.Mutex
	endpoints []joinedEndpoint
}

type joinedEndpoint struct{ name, host string }

// add registers a probed endpoint served from host.
func (j *gpuJoin) add(name, host string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.endpoints {
		if e.name == name {
			return
		}
	}
	j.endpoints = append(j.endpoints, joinedEndpoint{name, host})
}

// remove forgets the endpoints of prefix (retired: their GPUs are no
// longer theirs).
func (j *gpuJoin) remove(prefix string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.endpoints = slices.DeleteFunc(j.endpoints, func(e joinedEndpoint) bool { return ofEndpoint(e.name, prefix) })
}

// targetsFor returns the targets of a dcgm-exporter at dcgmHost: an
// endpoint on that host gets every GPU it reports (the exporter runs
// beside the engine); one elsewhere gets the GPUs whose Hostname label
// is its host. Several models on one host share its GPUs.
func (j *gpuJoin) targetsFor(dcgmHost string) func() []gpu.Target {
	return func() []gpu.Target {
		j.mu.Lock()
		defer j.mu.Unlock()
		out := make([]gpu.Target, 0, len(j.endpoints))
		for _, e := range j.endpoints {
			t := gpu.Target{Endpoint: e.name, IfMatched: true}
			if !sameHost(e.host, dcgmHost) {
				t.Host = e.host
			}
			out = append(out, t)
		}
		return out
	}
}

// mappedTargets are the GPU targets of the endpoints a config maps to
// GPUs by dcgm labels; joinable says some endpoint has no map, so it is
// joined to its host's GPUs once found.
func mappedTargets(c *config.Config) (targets []gpu.Target, joinable bool) {
	for _, ep := range c.Endpoints {
		if ep.GPU == nil {
			joinable = joinable || len(c.DCGM) > 0 || c.NvidiaSMI
			continue
		}
		targets = append(targets, gpu.Target{Endpoint: ep.Prefix() + "/" + ep.Model, Host: ep.GPU.Hostname,
			Pod: ep.GPU.Pod, Namespace: ep.GPU.Namespace, GPUs: ep.GPU.GPUs})
	}
	return targets, joinable
}

// joinHost is the host an endpoint's GPUs are on: a pod's node, the
// tunnel's for one reached through a tunnel (its URL names the far end's
// loopback), else its URL's.
func joinHost(o probe.Options) string {
	if node := o.Labels[config.LabelNode]; node != "" {
		return node
	}
	if via, ok := config.TunnelOf(o.Labels); ok {
		return via
	}
	return hostOf(o.URL)
}

// hostOf is the host name of a URL ("" when it has none).
func hostOf(raw string) string {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// sameHost: names equal, or both this machine's loopback name
// (localhost, 127.0.0.1, ::1). Other loopback addresses (127.0.0.2…)
// are hosts of their own, as tests and local multi-server setups use
// them, so each gets only its own exporter's GPUs.
func sameHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	local := func(h string) bool {
		if strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
	}
	return local(a) && local(b)
}
