// Package sshdtest starts a real OpenSSH server on loopback for tests of
// ssh:// targets: its own host key and authorized key, a temporary HOME
// whose .ssh/config names it "box" and whose known_hosts knows its key,
// and a proxy in front of it that can cut the connection.
package sshdtest

import (
	"fmt"
	"github.com/ttftop/ttftop/internal/discover/enginetest"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// SSHD is an sshd and the HOME that reaches it as "box".
type SSHD struct {
	Home    string // HOME with .ssh/config, id_ed25519, known_hosts
	HostKey string // the server's public key line
	Proxy   *Proxy
	// KnownHosts is the file the config names.
	KnownHosts string
	// Bin is first on the PATH of the server's sessions: a test puts
	// the host's commands there (a captured nvidia-smi).
	Bin string
	// Log is sshd's debug log: each channel it opens is a line.
	Log string
}

const sshdPath = "/usr/sbin/sshd"

// Start starts sshd, or skips the test when it is not installed.
func Start(t *testing.T) *SSHD {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		t.Skipf("%s not installed (Debian: openssh-server): %v", sshdPath, err)
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skipf("ssh-keygen not installed: %v", err)
	}
	// sshd refuses to start without its privilege-separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Skipf("cannot create /run/sshd: %v", err)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	sshDir := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(sshDir, 0o700); err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(dir, "host_ed25519")
	clientKey := filepath.Join(sshDir, "id_ed25519")
	keygen(t, hostKey)
	keygen(t, clientKey)
	pub := read(t, clientKey+".pub")
	authorized := filepath.Join(dir, "authorized_keys")
	write(t, authorized, pub)
	port := enginetest.FreePort(t)
	bin, logFile := filepath.Join(dir, "bin"), filepath.Join(dir, "sshd.log")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "sshd_config")
	write(t, conf, fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
LogLevel DEBUG1
SetEnv PATH=%s:/usr/local/bin:/usr/bin:/bin
`, port, hostKey, authorized, filepath.Join(dir, "sshd.pid"), bin))
	cmd := exec.Command(sshdPath, "-D", "-E", logFile, "-f", conf)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cmd.Process.Kill(); err != nil {
			t.Errorf("kill sshd: %v", err)
		}
		_ = cmd.Wait() // killed: its error is the signal
	})
	enginetest.WaitListening(t, port)
	p := startProxy(t, port)
	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	s := &SSHD{Home: home, HostKey: read(t, hostKey+".pub"), Proxy: p, KnownHosts: filepath.Join(sshDir, "known_hosts"),
		Bin: bin, Log: logFile}
	write(t, filepath.Join(sshDir, "config"), fmt.Sprintf(`Host box
    HostName 127.0.0.1
    Port %d
    User %s
    IdentityFile %s
    UserKnownHostsFile %s
`, p.Port, user, clientKey, s.KnownHosts))
	s.TrustHostKey(t)
	return s
}

// TrustHostKey writes the server's key into known_hosts.
func (s *SSHD) TrustHostKey(t *testing.T) {
	t.Helper()
	f := strings.Fields(s.HostKey)
	write(t, s.KnownHosts, fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.Proxy.Port, f[0], f[1]))
}

// ForgetHostKey empties known_hosts.
func (s *SSHD) ForgetHostKey(t *testing.T) { t.Helper(); write(t, s.KnownHosts, "") }

// TrustOtherKey puts another key for the server in known_hosts: what ssh
// sees when a host's key changed (or a machine in the middle).
func (s *SSHD) TrustOtherKey(t *testing.T) {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other")
	keygen(t, other)
	f := strings.Fields(read(t, other+".pub"))
	write(t, s.KnownHosts, fmt.Sprintf("[127.0.0.1]:%d %s %s\n", s.Proxy.Port, f[0], f[1]))
}

func keygen(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Proxy forwards loopback connections to sshd; Cut drops them all and
// Refuse turns new ones away, as a network outage would.
type Proxy struct {
	Port int
	to   int
	mu   sync.Mutex
	open map[net.Conn]bool
	down bool
}

func startProxy(t *testing.T, to int) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Port: l.Addr().(*net.TCPAddr).Port, to: to, open: map[net.Conn]bool{}}
	t.Cleanup(func() { _ = l.Close(); p.Cut() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *Proxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		_ = c.Close()
		return
	}
	p.mu.Unlock()
	up, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.to))
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.open[c], p.open[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src) // ends when either side closes
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	p.mu.Lock()
	delete(p.open, c)
	delete(p.open, up)
	p.mu.Unlock()
}

// Cut closes every proxied connection.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.open {
		_ = c.Close()
	}
}

// Refuse makes new connections fail (true) or pass again (false).
func (p *Proxy) Refuse(down bool) {
	p.mu.Lock()
	p.down = down
	p.mu.Unlock()
}

// Tunnelled counts the channels sshd opened to a loopback port: the
// connections carried through it, as its log says.
func (s *SSHD) Tunnelled(t *testing.T, port int) int {
	t.Helper()
	n, want := 0, fmt.Sprintf("target 127.0.0.1 port %d", port)
	for _, line := range strings.Split(read(t, s.Log), "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), want) {
			n++
		}
	}
	return n
}
