package discover

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// Candidate is a host:port that may be an LLM server, with how it came
// to be looked at.
type Candidate struct {
	Addr netip.Addr
	Port int
	// Engine is what the process list says, or unknown for a scanned port.
	Engine telemetry.Engine
	PID    int
	// How says how it was found: "vllm, pid 4312, :8000 from its --port".
	How string
}

// HostPort is the candidate's address for a URL.
func (c Candidate) HostPort() string { return net.JoinHostPort(c.Addr.String(), strconv.Itoa(c.Port)) }

var loopback = netip.MustParseAddr("127.0.0.1")

// maxSocketsPerProcess bounds the sockets tried of an engine process
// that names no port: its HTTP server is among its first, and its
// other sockets (RPC, ZMQ) are not worth a fingerprint each.
const maxSocketsPerProcess = 8

// Candidates lists what to fingerprint: each engine process's HTTP port
// (from its flag, else the engine's default, else every socket it listens
// on), then the well-known ports that something listens on and no engine
// process claimed. Each host:port appears once.
func Candidates(m Machine, ports []int) []Candidate {
	var out []Candidate
	seen := map[int]bool{}
	add := func(c Candidate) {
		if !seen[c.Port] {
			seen[c.Port] = true
			out = append(out, c)
		}
	}
	for _, p := range m.Procs {
		for _, c := range procCandidates(m, p) {
			add(c)
		}
	}
	for _, port := range ports {
		l, listening := m.listener(port, 0)
		if m.ListenersRead && !listening {
			continue
		}
		addr := loopback
		if listening {
			addr = reachable(l.Addr)
		}
		add(Candidate{Addr: addr, Port: port, Engine: telemetry.EngineUnknown, How: fmt.Sprintf(":%d, a well-known port%s", port, portEngines(port))})
	}
	return out
}

// procCandidates are one engine process's candidate ports.
func procCandidates(m Machine, p Proc) []Candidate {
	who := fmt.Sprintf("%s, pid %d", p.Spec.Engine, p.PID)
	var own []Listener // the sockets it listens on, when its fds could be read
	for _, l := range m.Listeners {
		if p.Sockets[l.Inode] {
			own = append(own, l)
		}
	}
	host := hostFlag(p)
	one := func(port int, why string) []Candidate {
		addr := loopback
		if l, ok := m.listener(port, 0); ok {
			addr = reachable(l.Addr)
		}
		if host.IsValid() && !host.IsUnspecified() {
			addr = host
		}
		return []Candidate{{Addr: addr, Port: port, Engine: p.Spec.Engine, PID: p.PID, How: fmt.Sprintf("%s, :%d %s", who, port, why)}}
	}
	if v, flag, ok := engines.FlagValue(p.Argv, p.Spec.PortFlags); ok {
		if port, err := strconv.Atoi(v); err == nil && port > 0 && port < 65536 {
			return one(port, "from its "+flag)
		}
	}
	if slices.ContainsFunc(own, func(l Listener) bool { return l.Port == p.Spec.DefaultPort }) || (len(own) == 0 && p.Sockets == nil) {
		return one(p.Spec.DefaultPort, "its engine's default port")
	}
	var out []Candidate
	for _, l := range own[:min(len(own), maxSocketsPerProcess)] {
		out = append(out, Candidate{Addr: reachable(l.Addr), Port: l.Port, Engine: p.Spec.Engine, PID: p.PID,
			How: fmt.Sprintf("%s, :%d a socket it listens on", who, l.Port)})
	}
	return out
}

// hostFlag is the address the process was told to listen on, if any.
func hostFlag(p Proc) netip.Addr {
	v, _, ok := engines.FlagValue(p.Argv, p.Spec.HostFlags)
	if !ok {
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(strings.Trim(v, "[]"))
	if err != nil {
		return netip.Addr{} // a host name: the listening socket says where
	}
	return a
}

// listener finds a listening socket on port (inode 0: any).
func (m Machine) listener(port int, inode uint64) (Listener, bool) {
	for _, l := range m.Listeners {
		if l.Port == port && (inode == 0 || l.Inode == inode) {
			return l, true
		}
	}
	return Listener{}, false
}

// reachable is where to connect to a socket listening on a: loopback for
// the wildcard addresses, the address itself otherwise.
func reachable(a netip.Addr) netip.Addr {
	switch {
	case a.Is4() && a.IsUnspecified():
		return loopback
	case a.IsUnspecified():
		return netip.IPv6Loopback()
	}
	return a
}

// portEngines names the engines whose default port this is.
func portEngines(port int) string {
	es := engines.WellKnownPorts()[port]
	if len(es) == 0 {
		return ""
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = string(e)
	}
	return " (" + strings.Join(names, ", ") + ")"
}
