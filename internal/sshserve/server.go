// Package sshserve serves the ttftop dashboard, read-only, over SSH: a
// team runs `ssh -p 2222 host` and watches the same live data without
// installing anything.
//
// Every SSH session gets its own tui.Model (sorting, selection, theme and
// size from its pty) over one shared tui.Data and tui.Alerts, so sources
// run once however many people watch. The server offers public-key
// authentication only, from an authorized-keys file; it runs no shell and
// no command, forwards nothing, and needs a pty.
//
// Wiring (cmd/ttftop):
//
//	s, err := sshserve.New(m.Store, m.SLO, sshserve.Options{AuthorizedKeys: ak, HostKey: hk, View: opts})
//	if err := s.Listen(); err != nil { ... }
//	err = s.Serve(ctx) // until ctx ends; then every session is closed
package sshserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ttftop/ttftop/tui"
)

// Defaults for Options.
const (
	DefaultListen      = "127.0.0.1:2222"
	DefaultIdleTimeout = 15 * time.Minute
	DefaultMaxDuration = 8 * time.Hour
	DefaultMaxSessions = 10
	// handshakeTimeout bounds an unauthenticated connection.
	handshakeTimeout = 20 * time.Second
	// shutdownGrace is how long viewers get to restore their terminals
	// before their connections are cut.
	shutdownGrace = 3 * time.Second
	// connSlack is how many connections beyond MaxSessions may be open
	// (handshaking, refused, or holding no session) before new ones are
	// dropped unanswered: unauthenticated clients cannot pile up.
	connSlack = 16
)

// Options configure a Server. AuthorizedKeys and HostKey are required.
type Options struct {
	// Listen is the TCP address (default DefaultListen).
	Listen string
	// AuthorizedKeys is an OpenSSH authorized_keys file: the only keys
	// that may log in. It is re-read when it changes.
	AuthorizedKeys string
	// HostKey is the server's private key file, created (ed25519, 0600)
	// when missing.
	HostKey string
	// IdleTimeout closes a session after this long without input from
	// its viewer (default DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
	// MaxDuration closes a session this long after it started (default
	// DefaultMaxDuration; negative: never).
	MaxDuration time.Duration
	// MaxSessions caps concurrent viewers (default DefaultMaxSessions).
	MaxSessions int
	// View is each session's starting UI (theme, refresh, window…);
	// Getenv is replaced by the session's environment.
	View tui.Options
	// Logger receives connects, disconnects and refusals; nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxDuration == 0 {
		o.MaxDuration = DefaultMaxDuration
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.View.FPS <= 0 {
		o.View.FPS = 20 // tui's default; tea's own (60) would cost every viewer CPU
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Server is one SSH endpoint over one shared data source.
type Server struct {
	opts   Options
	data   tui.Data
	alerts tui.Alerts
	log    *slog.Logger
	ssh    *ssh.Server
	auth   *authorizer
	hostFP string
	// newModel builds a session's model; tests swap it to inject faults.
	newModel func(tui.Data, tui.Alerts, tui.Options) tea.Model

	// base is cancelled last on shutdown: it kills programs that did not
	// quit within the grace period.
	base       context.Context
	cancelBase context.CancelFunc

	mu       sync.Mutex
	ln       net.Listener
	closed   bool
	viewers  map[*viewer]struct{}
	conns    map[net.Conn]struct{}
	handlers sync.WaitGroup
	// connGoroutines counts the library's connection goroutines still
	// running (from ConnCallback to ConnectionCloseCallback, which runs
	// after its own bookkeeping): the library's Shutdown waits on a
	// WaitGroup that a goroutine finishing its handshake may still Add
	// to, a race, so shutdown waits for them first.
	connGoroutines sync.WaitGroup
}

// New checks the keys and builds the server; it does not listen yet. It
// fails when the authorized-keys file is missing or holds no usable key,
// or when the host key cannot be read or created.
func New(data tui.Data, alerts tui.Alerts, opts Options) (*Server, error) {
	opts = opts.withDefaults()
	if opts.AuthorizedKeys == "" || opts.HostKey == "" {
		return nil, errors.New("sshserve: AuthorizedKeys and HostKey are required")
	}
	if err := opts.View.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, data: newSharedData(data, sharedReadAge), alerts: alerts, log: opts.Logger,
		viewers: map[*viewer]struct{}{}, conns: map[net.Conn]struct{}{},
		newModel: func(d tui.Data, a tui.Alerts, o tui.Options) tea.Model { return tui.New(d, a, o) }}
	auth, err := newAuthorizer(opts.AuthorizedKeys, func(msg string) { s.log.Warn(msg) })
	if err != nil {
		return nil, err
	}
	s.auth = auth
	signer, err := loadHostKey(opts.HostKey)
	if err != nil {
		return nil, err
	}
	s.hostFP = gossh.FingerprintSHA256(signer.PublicKey())
	s.ssh, err = s.newSSH(signer)
	if err != nil {
		return nil, err
	}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	return s, nil
}

// newSSH configures the library server so that only what ttftop needs
// is reachable: public keys, "session" channels, nothing else.
func (s *Server) newSSH(signer gossh.Signer) (*ssh.Server, error) {
	srv := &ssh.Server{
		Version:          "ttftop",
		HandshakeTimeout: handshakeTimeout,
		// The connection-level idle timer counts the frames we write, so
		// it only catches dead peers; viewer idleness is timed on input.
		IdleTimeout: max(s.opts.IdleTimeout, 0),
		// A backstop for connections that hold no session; sessions end
		// first, on their own timer, with the terminal restored.
		MaxTimeout: backstop(s.opts.MaxDuration),
		// Explicit maps: the library's Default* maps are package globals
		// another import could extend with forwarding handlers.
		ChannelHandlers:   map[string]ssh.ChannelHandler{"session": s.sessionChannel},
		RequestHandlers:   map[string]ssh.RequestHandler{},
		SubsystemHandlers: map[string]ssh.SubsystemHandler{},
		ConnCallback:      s.trackConn,
		// Every accepted connection's goroutine ends here.
		ConnectionCloseCallback: func(net.Conn) { s.connGoroutines.Done() },
		ConnectionFailedCallback: func(c net.Conn, err error) {
			s.log.Info("ssh connection refused", "remote", clean(c.RemoteAddr().String()), "err", clean(err.Error()))
		},
	}
	err := errors.Join(
		srv.SetOption(ssh.PublicKeyAuth(func(_ ssh.Context, key ssh.PublicKey) bool { return s.auth.allowed(key) })),
		srv.SetOption(ssh.EmulatePty()), // no OS pty per viewer: tea writes to the channel
		srv.SetOption(wish.WithMiddleware(func(ssh.Handler) ssh.Handler { return s.handle })),
	)
	if err != nil {
		return nil, fmt.Errorf("sshserve: %w", err)
	}
	srv.AddHostKey(signer)
	return srv, nil
}

// HostKeyFingerprint is the SHA256 fingerprint clients will be shown.
func (s *Server) HostKeyFingerprint() string { return s.hostFP }

// Listen binds Options.Listen, warning when the address is not loopback.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.opts.Listen)
	if err != nil {
		return fmt.Errorf("sshserve: %w", err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	if !isLoopback(s.opts.Listen) {
		s.log.Warn("listening on a non-loopback address: anyone who can reach it may try to log in (keys are still required)", "listen", s.opts.Listen)
	}
	s.log.Info("ttftop ssh server listening", "addr", ln.Addr().String(), "host_key", s.hostFP)
	return nil
}

// Addr is the bound address (nil before Listen).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Viewers is how many sessions are watching now.
func (s *Server) Viewers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.viewers)
}

// Serve accepts connections until ctx ends, then closes every session
// (each viewer's terminal is restored first when it answers in time) and
// returns once every goroutine it started has stopped.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
		s.mu.Lock()
		ln = s.ln
		s.mu.Unlock()
	}
	served := make(chan error, 1)
	go func() { served <- s.ssh.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		served <- err // shutdown below waits for it too
	}
	if serr := s.shutdown(served); err == nil || errors.Is(err, ssh.ErrServerClosed) {
		err = serr
	}
	return err
}

// shutdown stops accepting, asks every viewer to quit (restoring its
// terminal), then cuts what is left after shutdownGrace.
func (s *Server) shutdown(served <-chan error) error {
	s.mu.Lock()
	s.closed = true
	viewers := make([]*viewer, 0, len(s.viewers))
	for v := range s.viewers {
		viewers = append(viewers, v)
	}
	s.mu.Unlock()
	for _, v := range viewers {
		v.stop(errShutdown)
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	waitOrDone(ctx, &s.handlers)
	s.cancelBase() // programs that did not quit are killed
	err := s.ssh.Close()
	s.closeConns() // unauthenticated ones too: the library only tracks the rest
	s.handlers.Wait()
	s.connGoroutines.Wait()
	if serr := <-served; !errors.Is(serr, ssh.ErrServerClosed) && err == nil {
		err = serr
	}
	// Shutdown now only waits for connection goroutines, all ended above.
	if serr := s.ssh.Shutdown(context.Background()); err == nil {
		err = serr
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// waitOrDone waits for wg or for ctx, whichever is first.
func waitOrDone(ctx context.Context, wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// trackConn records every accepted connection, so shutdown can close
// those still in their handshake, and refuses new ones while closing.
func (s *Server) trackConn(_ ssh.Context, c net.Conn) net.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.conns) >= 2*s.opts.MaxSessions+connSlack {
		return nil // the library closes it
	}
	tc := &trackedConn{Conn: c, s: s}
	s.conns[tc] = struct{}{}
	s.connGoroutines.Add(1) // under mu, before closed: never during shutdown's Wait
	return tc
}

func (s *Server) closeConns() {
	s.mu.Lock()
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.log.Debug("closing connection", "err", err)
		}
	}
}

// trackedConn leaves the server's set when closed.
type trackedConn struct {
	net.Conn
	s    *Server
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
	})
	return c.Conn.Close()
}

// backstop is the connection lifetime cap for a session limit d.
func backstop(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + time.Minute
}

// isLoopback reports whether addr binds only a loopback interface; ":2222"
// (every interface) is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
