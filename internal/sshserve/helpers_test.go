package sshserve

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/telemetry"
)

// waitLong bounds every wait: generous, because the test machine is a
// shared 2-core box running -race.
const waitLong = 30 * time.Second

// syncBuffer is written by a session and read by the test.
type syncBuffer = syncbuf.Buffer

// fixture is a running server over a monitor with no sources, fed by the
// test through Observe.
type fixture struct {
	t      *testing.T
	dir    string
	mon    *monitor.Monitor
	srv    *Server
	addr   string
	key    gossh.Signer // an authorized client key
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

func newKey(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startServer serves on 127.0.0.1:0; mod adjusts the options (and may set
// the test hooks on the server before it serves).
func startServer(t *testing.T, mod func(*Options), hooks ...func(*Server)) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), key: newKey(t), logs: &syncBuffer{}}
	ak := filepath.Join(f.dir, "authorized_keys")
	if err := os.WriteFile(ak, gossh.MarshalAuthorizedKey(f.key.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	f.mon = monitor.New(monitor.Options{})
	feed(f.mon, "llama-test", time.Now(), 0.1234)
	opts := Options{Listen: "127.0.0.1:0", AuthorizedKeys: ak, HostKey: filepath.Join(f.dir, "hk", "host_key"),
		Logger: slog.New(slog.NewTextHandler(f.logs, nil))}
	opts.View.Refresh = 200 * time.Millisecond // frames come quickly even on a slow machine
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(f.mon.Store, f.mon.SLO, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		h(srv)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	f.srv, f.addr = srv, srv.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan error, 1)
	go func() { f.done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		if err := f.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", f.logs.String())
		}
	})
	return f
}

// stop shuts the server down and waits for Serve (idempotent).
func (f *fixture) stop() error {
	f.cancel()
	select {
	case err, ok := <-f.done:
		if ok {
			close(f.done)
		}
		return err
	case <-time.After(waitLong):
		f.t.Error("Serve did not return after shutdown")
		return nil
	}
}

// feed records one endpoint with a TTFT sample.
func feed(m *monitor.Monitor, name string, at time.Time, ttft float64) {
	m.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: name, At: at,
		Info: &telemetry.Endpoint{Name: name, Model: "org/" + name, Engine: telemetry.EngineVLLM}})
	for _, sig := range []struct {
		s telemetry.Signal
		v float64
	}{{telemetry.TTFT, ttft}, {telemetry.TPOT, 0.0125}, {telemetry.ProbeSuccess, 1}} {
		m.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: name, Signal: sig.s, Value: sig.v,
			At: at, Source: "probe:test", Interval: time.Second})
	}
}

func (f *fixture) config(signer gossh.Signer, hostKey *gossh.PublicKey) *gossh.ClientConfig {
	return &gossh.ClientConfig{
		User: "alice",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, key gossh.PublicKey) error {
			if hostKey != nil {
				*hostKey = key
			}
			return nil
		},
		Timeout: waitLong,
	}
}

func (f *fixture) dial(cfg *gossh.ClientConfig) (*gossh.Client, error) {
	return gossh.Dial("tcp", f.addr, cfg)
}

// login connects with the authorised key; the client closes at cleanup.
func (f *fixture) login() *gossh.Client {
	f.t.Helper()
	client, err := f.dial(f.config(f.key, nil))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { client.Close() })
	return client
}

// session logs in and opens one session, closed at cleanup.
func (f *fixture) session() *gossh.Session {
	f.t.Helper()
	sess, err := f.login().NewSession()
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { sess.Close() })
	return sess
}

// viewerConn is one client session with a pty and a shell.
type viewerConn struct {
	t      *testing.T
	client *gossh.Client
	sess   *gossh.Session
	out    *syncBuffer
	errOut *syncBuffer
	stdin  io.WriteCloser
	ended  chan error
}

// openViewer connects like `ssh -t`: a 120x40 pty (TERM xterm-256color
// unless term says otherwise) and a shell, with env sent before the pty.
func (f *fixture) openViewer(env map[string]string, term ...string) *viewerConn {
	f.t.Helper()
	client := f.login()
	v := &viewerConn{t: f.t, client: client, out: &syncBuffer{}, errOut: &syncBuffer{}, ended: make(chan error, 1)}
	f.t.Cleanup(v.close)
	var err error
	if v.sess, err = client.NewSession(); err != nil {
		f.t.Fatal(err)
	}
	for k, val := range env {
		if err := v.sess.Setenv(k, val); err != nil {
			f.t.Fatal(err)
		}
	}
	v.sess.Stdout, v.sess.Stderr = v.out, v.errOut
	if v.stdin, err = v.sess.StdinPipe(); err != nil {
		f.t.Fatal(err)
	}
	t := "xterm-256color"
	if len(term) > 0 {
		t = term[0]
	}
	if err := v.sess.RequestPty(t, 40, 120, gossh.TerminalModes{}); err != nil {
		f.t.Fatal(err)
	}
	if err := v.sess.Shell(); err != nil {
		f.t.Fatal(err)
	}
	go func() { v.ended <- v.sess.Wait() }()
	return v
}

// waitText waits until the output, escape sequences removed, holds every
// string in want; the frame is drawn cell by cell, so each is checked
// on its own.
func (v *viewerConn) waitText(want ...string) {
	v.t.Helper()
	deadline := time.Now().Add(waitLong)
	for time.Now().Before(deadline) {
		text := ansi.Strip(v.out.String())
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(text, w)
		}
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	v.t.Fatalf("no frame with %q after %v; got %d bytes:\n%s", want, waitLong, v.out.Len(), ansi.Strip(v.out.String()))
}

// waitEnd waits for the session to end and returns its error.
func (v *viewerConn) waitEnd() error {
	v.t.Helper()
	select {
	case err := <-v.ended:
		v.ended <- err
		return err
	case <-time.After(waitLong):
		v.t.Fatal("session did not end")
		return nil
	}
}

func (v *viewerConn) close() {
	if err := v.client.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
		v.t.Errorf("client close: %v", err)
	}
}
