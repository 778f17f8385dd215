package sshserve

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ttftop/ttftop/tui"
)

func TestViewerSeesLiveFrames(t *testing.T) {
	// The server's own terminal must not leak into sessions (were it
	// used, TERM=dumb would mean no colour): each session's colour profile
	// comes from the TERM of its pty.
	t.Setenv("TERM", "dumb")
	t.Setenv("NO_COLOR", "")
	f := startServer(t, nil)
	v := f.openViewer(nil)
	basic := f.openViewer(nil, "xterm")
	v.waitText("llama-test", "123ms")
	basic.waitText("llama-test", "123ms")
	v.waitText("READ-ONLY") // said to every viewer, with their count
	basic.waitText("2 viewers")
	if out := v.out.String(); !strings.Contains(out, "\x1b[38;5;") {
		t.Errorf("TERM=xterm-256color: want 256-colour output")
	}
	if out := basic.out.String(); strings.Contains(out, "\x1b[38;5;") || !strings.Contains(out, "\x1b[3") {
		t.Errorf("TERM=xterm: want 16-colour output")
	}
	feed(f.mon, "late-model", time.Now(), 0.25)
	v.waitText("late-model", "250ms")
	if logs := f.logs.String(); !strings.Contains(logs, "ssh viewer connected") || !strings.Contains(logs, "user=alice") ||
		!strings.Contains(logs, "key="+gossh.FingerprintSHA256(f.key.PublicKey())) {
		t.Errorf("connect not logged with user and key:\n%s", logs)
	}
}

func TestNoColorFromSessionEnv(t *testing.T) {
	f := startServer(t, nil)
	v := f.openViewer(map[string]string{"NO_COLOR": "yes"})
	v.waitText("llama-test", "123ms")
	if out := v.out.String(); strings.Contains(out, "\x1b[38;") {
		t.Errorf("NO_COLOR session still got colour")
	}
}

func TestUnknownKeyRefused(t *testing.T) {
	f := startServer(t, nil)
	_, err := f.dial(f.config(newKey(t), nil))
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("unknown key: want an authentication error, got %v", err)
	}
}

func TestOnlyPublicKeyOffered(t *testing.T) {
	f := startServer(t, nil)
	cfg := f.config(f.key, nil)
	cfg.Auth = []gossh.AuthMethod{
		gossh.Password("hunter2"),
		gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) { return nil, nil }),
	}
	_, err := f.dial(cfg)
	// The client tries only methods the server lists: "none" is the probe.
	if err == nil || !strings.Contains(err.Error(), "attempted methods [none]") {
		t.Fatalf("password/keyboard-interactive must not be offered; got %v", err)
	}
}

func TestCommandRefused(t *testing.T) {
	f := startServer(t, nil)
	client := f.login()
	for _, pty := range []bool{false, true} {
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if pty {
			if err := sess.RequestPty("xterm", 24, 80, nil); err != nil {
				t.Fatal(err)
			}
		}
		var stderr syncBuffer
		sess.Stderr = &stderr
		err = sess.Run("ls")
		var exit *gossh.ExitError
		if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(stderr.String(), "commands are not run") {
			t.Errorf("pty=%v: exec: want exit 1 and a message, got %v, stderr %q", pty, err, stderr.String())
		}
	}
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.RequestSubsystem("sftp"); err == nil {
		t.Error("sftp subsystem accepted")
	}
}

func TestNoPTYRefused(t *testing.T) {
	f := startServer(t, nil)
	sess := f.session()
	var stderr syncBuffer
	sess.Stderr = &stderr
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	err := sess.Wait()
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(stderr.String(), "ttftop needs a terminal: ssh -t") {
		t.Errorf("shell without pty: got %v, stderr %q", err, stderr.String())
	}
}

func TestForwardingRefused(t *testing.T) {
	f := startServer(t, nil)
	client := f.login()
	if c, err := client.Dial("tcp", f.addr); err == nil { // local forwarding (-L)
		c.Close()
		t.Error("direct-tcpip channel accepted")
	}
	if l, err := client.Listen("tcp", "127.0.0.1:0"); err == nil { // remote forwarding (-R)
		l.Close()
		t.Error("tcpip-forward accepted")
	}
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if ok, err := sess.SendRequest("auth-agent-req@openssh.com", true, nil); ok || err != nil { // -A
		t.Errorf("agent forwarding: ok=%v err=%v", ok, err)
	}
}

func TestSessionCap(t *testing.T) {
	f := startServer(t, func(o *Options) { o.MaxSessions = 2 })
	a, b := f.openViewer(nil), f.openViewer(nil)
	a.waitText("llama-test")
	b.waitText("llama-test")
	c := f.openViewer(nil)
	err := c.waitEnd()
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(c.errOut.String(), "too many viewers") {
		t.Fatalf("third viewer: want 'too many viewers' and exit 1, got %v, stderr %q", err, c.errOut.String())
	}
	a.close()
	waitViewers(t, f, 1)
	d := f.openViewer(nil)
	d.waitText("llama-test")
}

// waitViewers waits for the server to count n viewers.
func waitViewers(t *testing.T, f *fixture, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for f.srv.Viewers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d viewers, want %d", f.srv.Viewers(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLog waits for the server log to contain s.
func waitLog(t *testing.T, f *fixture, s string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !strings.Contains(f.logs.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("log never had %q:\n%s", s, f.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHostKeyCreatedOnceAndReused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "ttftop", "ssh_host_ed25519_key")
	fingerprints := make([]string, 2)
	for i := range fingerprints {
		f := startServer(t, func(o *Options) { o.HostKey = path })
		var seen gossh.PublicKey
		client, err := f.dial(f.config(f.key, &seen))
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Close(); err != nil {
			t.Fatal(err)
		}
		fingerprints[i] = gossh.FingerprintSHA256(seen)
		if fingerprints[i] != f.srv.HostKeyFingerprint() {
			t.Errorf("client saw %s, server reports %s", fingerprints[i], f.srv.HostKeyFingerprint())
		}
		if err := f.stop(); err != nil {
			t.Fatal(err)
		}
	}
	if fingerprints[0] != fingerprints[1] {
		t.Errorf("host key changed between starts: %s then %s", fingerprints[0], fingerprints[1])
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v (err %v), want %04o", p, st.Mode().Perm(), err, want)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadHostKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable host key: want a refusal, got %v", err)
	}
}

func TestAuthorizedKeysRequired(t *testing.T) {
	dir := t.TempDir()
	key := string(gossh.MarshalAuthorizedKey(newKey(t).PublicKey()))
	cases := map[string]struct{ content, want string }{
		"missing":  {"", "no such file"},
		"empty":    {"# nobody yet\n\n", "no usable public key"},
		"garbage":  {"not a key\n", "no usable public key"},
		"from=":    {`from="10.0.0.0/8" ` + key, "no usable public key"},
		"command=": {`command="uptime" ` + key, "no usable public key"},
		"restrict": {"restrict " + key, "no usable public key"},
	}
	for name, c := range cases {
		path := filepath.Join(dir, strings.TrimSuffix(name, "="))
		if name != "missing" {
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, err := New(nil, nil, Options{AuthorizedKeys: path, HostKey: filepath.Join(dir, "hk")})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want error with %q, got %v", name, c.want, err)
		}
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("restrict,pty,no-agent-forwarding "+key), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(nil, nil, Options{AuthorizedKeys: ok, HostKey: filepath.Join(dir, "hk")}); err != nil {
		t.Errorf("restrict,pty key: %v", err)
	}
}

func TestRemovedKeyRevoked(t *testing.T) {
	f := startServer(t, nil)
	other := newKey(t)
	// A different size and a later mtime: the change is seen even where
	// the filesystem's timestamps are coarse.
	if err := os.WriteFile(f.srv.opts.AuthorizedKeys, gossh.MarshalAuthorizedKey(other.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(f.srv.opts.AuthorizedKeys, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := f.dial(f.config(f.key, nil)); err == nil {
		t.Error("a key removed from the file still logs in")
	}
	client, err := f.dial(f.config(other, nil))
	if err != nil {
		t.Fatalf("a key added to the file: %v", err)
	}
	client.Close()
}

// panicModel panics on its first message, as a buggy view would.
type panicModel struct{}

func (panicModel) Init() tea.Cmd                       { return nil }
func (panicModel) Update(tea.Msg) (tea.Model, tea.Cmd) { panic("boom") }
func (panicModel) View() tea.View                      { return tea.NewView("") }

func TestLeavingAndPanickingViewersDisturbNoOne(t *testing.T) {
	f := startServer(t, nil, func(s *Server) {
		real := s.newModel
		s.newModel = func(d tui.Data, a tui.Alerts, o tui.Options) tea.Model {
			if o.Getenv("TTFTOP_TEST_PANIC") != "" {
				return panicModel{}
			}
			return real(d, a, o)
		}
	})
	a, b := f.openViewer(nil), f.openViewer(nil)
	a.waitText("llama-test")
	b.waitText("llama-test")
	a.close()
	bad := f.openViewer(map[string]string{"TTFTOP_TEST_PANIC": "1"})
	if err := bad.waitEnd(); err == nil {
		t.Log("panicking session ended cleanly")
	}
	waitViewers(t, f, 1)
	feed(f.mon, "after-leave", time.Now(), 0.5)
	b.waitText("after-leave", "500ms")
	c := f.openViewer(nil)
	c.waitText("after-leave")
}

func TestIdleTimeout(t *testing.T) {
	f := startServer(t, func(o *Options) { o.IdleTimeout = 300 * time.Millisecond })
	v := f.openViewer(nil)
	if err := v.waitEnd(); err != nil {
		t.Errorf("idle session: %v", err)
	}
	if !strings.Contains(v.errOut.String(), "without input") {
		t.Errorf("idle session not told why: %q", v.errOut.String())
	}
	waitLog(t, f, "reason=\"idle for 300ms without input; disconnected\"")
}

func TestMaxDuration(t *testing.T) {
	f := startServer(t, func(o *Options) { o.MaxDuration = 500 * time.Millisecond })
	v := f.openViewer(nil)
	if err := v.waitEnd(); err != nil {
		t.Errorf("timed-out session: %v", err)
	}
	if !strings.Contains(v.errOut.String(), "session time limit reached") {
		t.Errorf("session not told why: %q", v.errOut.String())
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:2222": true, "[::1]:2222": true, "localhost:2222": true, "127.8.9.1:22": true,
		":2222": false, "0.0.0.0:2222": false, "[::]:2222": false, "10.1.2.3:2222": false, "example.com:22": false, "junk": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v", addr, got)
		}
	}
}

func TestEnvRequestsCapped(t *testing.T) {
	f := startServer(t, nil)
	sess := f.session()
	refused := 0
	for i := range maxEnvRequests + 5 {
		if err := sess.Setenv(fmt.Sprintf("V%d", i), "x"); err != nil {
			refused++
		}
	}
	if refused != 5 {
		t.Errorf("%d of %d env requests refused, want 5", refused, maxEnvRequests+5)
	}
	if err := sess.Setenv("BIG", strings.Repeat("x", maxEnvBytes)); err == nil {
		t.Error("oversized env request accepted")
	}
}

func TestConnectionCap(t *testing.T) {
	f := startServer(t, func(o *Options) { o.MaxSessions = 1 })
	// Unauthenticated connections that never speak: beyond the cap the
	// server drops new ones at once.
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	limit := 2*1 + connSlack
	for range limit {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(waitLong)
	for {
		f.srv.mu.Lock()
		n := len(f.srv.conns)
		f.srv.mu.Unlock()
		if n == limit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections tracked, want %d", n, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := f.dial(f.config(f.key, nil)); err == nil {
		t.Error("a connection beyond the cap was served")
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	deadline = time.Now().Add(waitLong)
	for {
		client, err := f.dial(f.config(f.key, nil))
		if err == nil {
			client.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connections still refused after the others closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
