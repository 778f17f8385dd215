//go:build integration

package sshserve

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestOpenSSHViewerWithBasicTERM connects the real OpenSSH client, in a
// 120×40 pty with TERM=xterm (a 16-colour terminal), the host key pinned
// in a known_hosts file and nothing else configured. The session must get
// the read-only badge with its viewer count and the figures, in colour
// but only with the 16 basic colours: no 256-colour (38;5 / 48;5) or
// true-colour (38;2 / 48;2) escapes, which such a terminal would garble.
func TestOpenSSHViewerWithBasicTERM(t *testing.T) {
	sshBin, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("OpenSSH client not installed (apt-get install openssh-client)")
	}
	dir := t.TempDir()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	f := startServer(t, func(o *Options) {
		ak, err := os.OpenFile(o.AuthorizedKeys, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ak.Write(gossh.MarshalAuthorizedKey(sshPub)); err != nil {
			t.Fatal(err)
		}
		if err := ak.Close(); err != nil {
			t.Fatal(err)
		}
	})
	hostKey, err := os.ReadFile(f.srv.opts.HostKey)
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := gossh.ParsePrivateKey(hostKey)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(f.addr)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(f.addr)}, hostSigner.PublicKey()) + "\n"
	if err := os.WriteFile(knownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sshBin, "-tt", "-F", "/dev/null", "-i", keyFile, "-p", port,
		"-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile="+knownHosts, "-o", "GlobalKnownHostsFile=/dev/null",
		"alice@"+host)
	cmd.Env = []string{"TERM=xterm", "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		// Ends with EIO once ssh exits and the pty closes.
		if _, err := io.Copy(out, tty); err != nil && !errors.Is(err, syscall.EIO) {
			t.Errorf("read pty: %v", err)
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = tty.Close()
		<-copied
	})
	deadline := time.Now().Add(waitLong)
	for {
		text := ansi.Strip(out.String())
		if strings.Contains(text, "READ-ONLY · 1 viewer") && strings.Contains(text, "llama-test") && strings.Contains(text, "123ms") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frame with the read-only badge and the figures after %v; got %d bytes:\n%s", waitLong, out.Len(), text)
		}
		time.Sleep(50 * time.Millisecond)
	}
	raw := out.String()
	for _, deep := range []string{"38;5;", "48;5;", "38;2;", "48;2;"} {
		if strings.Contains(raw, deep) {
			t.Errorf("TERM=xterm session got %q escapes (256 or true colour)", deep)
		}
	}
	if !strings.Contains(raw, "\x1b[3") && !strings.Contains(raw, "\x1b[9") {
		t.Errorf("TERM=xterm session got no 16-colour escapes at all")
	}
}
