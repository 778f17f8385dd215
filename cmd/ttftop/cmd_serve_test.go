package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/syncbuf"
)

// lockedBuffer is written by the command and read by the test.
type lockedBuffer = syncbuf.Buffer

// waitFor polls f until it returns true or 30 s pass (a loaded machine).
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestServeNeedsSSH(t *testing.T) {
	code, _, stderr := runCmd(t, "serve")
	if code != 2 || stderr != "ttftop serve: give --ssh (the only way to serve for now)\nRun 'ttftop serve --help' for its flags.\n" {
		t.Errorf("serve without --ssh: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestServeRefusesWithoutAuthorizedKeys(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ak := range []string{filepath.Join(dir, "missing"), empty} {
		code, _, stderr := runCmd(t, "serve", "--ssh", "--scrape", "http://127.0.0.1:1", "--listen", "127.0.0.1:0",
			"--authorized-keys", ak, "--host-key", filepath.Join(dir, "hk"))
		if code != 1 || !strings.Contains(stderr, "authorized keys") {
			t.Errorf("%s: exit %d, stderr:\n%s", ak, code, stderr)
		}
	}
}

// TestServeDemoOverSSH: `ttftop serve --ssh --demo` end to end, with a
// real SSH client watching the simulator's models.
func TestServeDemoOverSSH(t *testing.T) {
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ak := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(ak, gossh.MarshalAuthorizedKey(signer.PublicKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"serve", "--ssh", "--demo", "--listen", "127.0.0.1:0", "--refresh", "200ms",
			"--authorized-keys", ak, "--host-key", filepath.Join(dir, "hk")}, &stdout, &stderr)
	}()
	addrRE := regexp.MustCompile(`over SSH on (127\.0\.0\.1:\d+)`)
	var addr string
	waitFor(t, "the listening address", func() bool {
		if m := addrRE.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	client, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "bob", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: func(string, net.Addr, gossh.PublicKey) error { return nil }, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	sess.Stdout = &out
	if err := sess.RequestPty("xterm-256color", 40, 160, nil); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the demo's models on screen", func() bool {
		return strings.Contains(ansi.Strip(out.String()), sim.DemoHealthy)
	})
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d, stderr:\n%s", c, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if stdout.String() != "" {
		t.Errorf("serve wrote to stdout (diagnostics go to stderr): %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "ssh viewer connected") || !strings.Contains(stderr.String(), "user=bob") {
		t.Errorf("connect not logged:\n%s", stderr.String())
	}
}
