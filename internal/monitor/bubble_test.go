package monitor

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/gpu"
)

// pipeNet is an in-memory network for a synctest bubble: each host is an
// http.Server on a listener whose connections are net.Pipe ends, so every
// wait (a probe's stream, a scrape) is on the bubble's own channels and
// its fake clock moves only when everything waits. Nothing listens on a
// real address.
type pipeNet struct {
	hosts map[string]*pipeListener
	stops []func()
}

// pipeListener hands the server ends of dialled pipes to an http.Server.
type pipeListener struct {
	addr  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.addr) }

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// serve serves h as host ("name:port") until close.
func (n *pipeNet) serve(host string, h http.Handler) {
	if n.hosts == nil {
		n.hosts = map[string]*pipeListener{}
	}
	l := &pipeListener{addr: host, conns: make(chan net.Conn), done: make(chan struct{})}
	n.hosts[host] = l
	hs := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(l) // always ErrServerClosed or net.ErrClosed once stopped
	}()
	n.stops = append(n.stops, func() {
		_ = hs.Close() // closes the listener and every connection; its error is the listener's, which has none
		<-served
	})
}

// close stops every server.
func (n *pipeNet) close() {
	for _, stop := range n.stops {
		stop()
	}
}

// dial is the config's Dial: a pipe to the host's server.
func (n *pipeNet) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	l, ok := n.hosts[addr]
	if !ok {
		return nil, fmt.Errorf("pipenet: no host %s", addr)
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	return nil, fmt.Errorf("pipenet: %s: %w", addr, net.ErrClosed)
}

// The simulator's in-memory host names in a bubble.
const (
	bubbleSimHost  = "sim.pipe:80"
	bubbleDCGMHost = "dcgm.pipe:80"
)

// runInBubble is runOnSimulator inside a synctest bubble: the simulator
// (CoarseTiming: its steps wait on timers only) serves over a pipeNet,
// the monitor's probes, scrapes and dcgm reads dial it, and every clock
// is the bubble's. It returns the monitor and a stop that must be called
// before the bubble's function returns (it ends every goroutine).
func runInBubble(t *testing.T, cfg sim.Config, opts Options, adjust func(*config.Config, *pipeNet)) (*Monitor, func()) {
	t.Helper()
	cfg.CoarseTiming = true
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pn := &pipeNet{}
	pn.serve(bubbleSimHost, srv.Handler())
	pn.serve(bubbleDCGMHost, srv.DCGMHandler())
	c := DemoConfig(srv)
	c.DCGM = []gpu.Settings{{URL: "http://" + bubbleDCGMHost, Dial: pn.dial}}
	for i := range c.Endpoints {
		c.Endpoints[i].URL = "http://" + bubbleSimHost
		c.Endpoints[i].Dial = pn.dial
	}
	if adjust != nil {
		adjust(c, pn)
	}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	m := New(opts)
	if err := m.AddConfig(c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	return m, func() {
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
		pn.close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	}
}
