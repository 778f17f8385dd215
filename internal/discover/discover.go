package discover

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sources/httpclient"
)

// Defaults of Options.
const (
	DefaultTimeout     = 2 * time.Second
	DefaultConcurrency = 8
	DefaultDCGMPort    = 9400
)

// Options configure Local.
type Options struct {
	ProcRoot string // default /proc
	// Ports are the well-known ports tried on loopback; nil = the
	// engines' defaults (DefaultPorts).
	Ports []int
	// Timeout bounds each candidate's fingerprint (default 2 s).
	Timeout time.Duration
	// Concurrency is how many candidates are fingerprinted at once.
	Concurrency int
	// DCGMPort is where a dcgm-exporter is looked for (0: the default
	// 9400; negative: not looked for).
	DCGMPort int
	// Dial, when set, opens every connection (through an SSH tunnel).
	Dial httpclient.DialFunc
	// LookPath finds nvidia-smi (default exec.LookPath; tests replace it).
	LookPath func(string) (string, error)
}

// DefaultPorts are the engines' default HTTP ports, ascending.
func DefaultPorts() []int {
	var out []int
	for p := range engines.WellKnownPorts() {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Result is what Local found.
type Result struct {
	Endpoints []Found
	Skipped   []Skipped
	// DCGM is a dcgm-exporter's URL when one answered.
	DCGM string
	// NvidiaSMI is true when nvidia-smi is installed.
	NvidiaSMI bool
	// Looked says what was examined, for the message when nothing is found.
	Looked string
}

// Local discovers this machine's LLM servers, and its GPUs: nvidia-smi
// when installed, a dcgm-exporter when one answers.
func Local(ctx context.Context, o Options) (Result, error) {
	m, err := ReadMachine(cmp.Or(o.ProcRoot, "/proc"))
	if err != nil && !m.ListenersRead {
		m = Machine{} // no /proc at all: the port list alone, each tried
	}
	r, err := FromMachine(ctx, m, o)
	if err != nil {
		return r, err
	}
	lookPath := o.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if _, err := lookPath("nvidia-smi"); err == nil {
		r.NvidiaSMI = true
	}
	return r, nil
}

// FromMachine fingerprints the candidates of a machine already read
// (this one, or another through SSH with o.Dial), and looks for a
// dcgm-exporter.
func FromMachine(ctx context.Context, m Machine, o Options) (Result, error) {
	ports := o.Ports
	if ports == nil {
		ports = DefaultPorts()
	}
	r, err := Fingerprint(ctx, Candidates(m, ports), o)
	if err != nil {
		return r, err
	}
	r.Looked = fmt.Sprintf("%d listening sockets, %d processes (%d named like an engine), ports %s on loopback",
		len(m.Listeners), m.Processes, len(m.Procs), joinPorts(ports))
	if port := cmp.Or(o.DCGMPort, DefaultDCGMPort); port > 0 {
		r.DCGM = findDCGM(ctx, m, port, o)
	}
	r.NvidiaSMI = m.NvidiaSMI
	return r, nil
}

// Fingerprint asks every candidate, at most o.Concurrency at once, and
// sorts them into found and skipped, in the candidates' order.
func Fingerprint(ctx context.Context, cands []Candidate, o Options) (Result, error) {
	timeout := cmp.Or(o.Timeout, DefaultTimeout)
	metrics, err := httpclient.New(httpclient.Config{Timeout: timeout, MaxRedirects: -1, Dial: o.Dial})
	if err != nil {
		return Result{}, err
	}
	defer metrics.CloseIdle()
	found := make([]*Found, len(cands))
	why := make([]error, len(cands))
	sem := make(chan struct{}, cmp.Or(o.Concurrency, DefaultConcurrency))
	var wg sync.WaitGroup
	for i, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f, err := fingerprint(ctx, c, metrics, timeout, o.Dial)
			if err != nil {
				why[i] = err
				return
			}
			found[i] = &f
		}()
	}
	wg.Wait()
	var r Result
	for i, c := range cands {
		if found[i] != nil {
			r.Endpoints = append(r.Endpoints, *found[i])
		} else {
			r.Skipped = append(r.Skipped, Skipped{Candidate: c, Why: why[i].Error()})
		}
	}
	return r, nil
}

// findDCGM returns the exporter's /metrics URL when one answers on port.
func findDCGM(ctx context.Context, m Machine, port int, o Options) string {
	if m.ListenersRead {
		if _, ok := m.listener(port, 0); !ok {
			return ""
		}
	}
	c, err := httpclient.New(httpclient.Config{Timeout: cmp.Or(o.Timeout, DefaultTimeout), MaxRedirects: -1, Dial: o.Dial})
	if err != nil {
		return ""
	}
	defer c.CloseIdle()
	addr := loopback
	if l, ok := m.listener(port, 0); ok {
		addr = reachable(l.Addr)
	}
	url := "http://" + netip.AddrPortFrom(addr, uint16(port)).String() + "/metrics"
	if det, ok := metricsEngine(ctx, c, url); ok && det.Exporter == "dcgm-exporter" {
		return url
	}
	return ""
}

// Describe lists what was found, one line each, for stderr.
func (r Result) Describe() []string {
	var out []string
	for _, f := range r.Endpoints {
		out = append(out, "found "+f.describe())
	}
	for _, s := range r.Skipped {
		out = append(out, fmt.Sprintf("left alone %s (%s): %s", s.HostPort(), s.How, s.Why))
	}
	if r.DCGM != "" {
		out = append(out, "found a dcgm-exporter at "+r.DCGM)
	}
	if r.NvidiaSMI {
		out = append(out, "found nvidia-smi: reading the host's GPUs")
	}
	return out
}

func joinPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}
