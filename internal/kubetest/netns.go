package kubetest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// NetNS is a network namespace joined to this one by a veth pair: pods'
// endpoints listen on IP inside it, a /30 in 10.0.0.0/8 the API server
// can reach and, unlike loopback, agrees to proxy to. It needs root (CI
// and this project's machines run tests as root); without, the test is
// skipped (failed when TTFTOP_KUBE_REQUIRED is set).
type NetNS struct {
	name string
	// IP is the address inside the namespace, the pod's IP.
	IP string
}

// NewNetNS creates a namespace, removed when the test ends.
func NewNetNS(t testing.TB) *NetNS {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%x", b)
	// A random /30 in 10.128.0.0/9: concurrent tests (and packages) get
	// their own subnet.
	base := net.IPv4(10, 128|b[0]&0x7f, b[1], b[2]&0xfc)
	hostIP, podIP := next(base, 1), next(base, 2)
	n := &NetNS{name: "ttftop-" + id, IP: podIP.String()}
	host, peer := "tth"+id, "ttp"+id // interface names: 15 bytes at most
	steps := [][]string{
		{"netns", "add", n.name},
		{"link", "add", host, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", n.name},
		{"addr", "add", hostIP.String() + "/30", "dev", host},
		{"link", "set", host, "up"},
		{"-n", n.name, "addr", "add", n.IP + "/30", "dev", peer},
		{"-n", n.name, "link", "set", peer, "up"},
	}
	for i, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			msg := fmt.Sprintf("kubetest: ip %s: %v: %s (network namespaces need root)", strings.Join(s, " "), err, out)
			if i == 0 && os.Getenv("TTFTOP_KUBE_REQUIRED") == "" {
				t.Skip(msg)
			}
			t.Fatal(msg)
		}
		if i == 0 {
			t.Cleanup(func() { ip(t, "netns", "del", n.name) })
		}
		if i == 1 {
			t.Cleanup(func() { ip(t, "link", "del", host) }) // removes its peer too
		}
	}
	return n
}

func next(base net.IP, k byte) net.IP {
	ip := make(net.IP, 4)
	copy(ip, base.To4())
	ip[3] += k
	return ip
}

func ip(t testing.TB, args ...string) {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil && !strings.Contains(string(out), "Cannot find device") {
		t.Errorf("kubetest: ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Listen opens a TCP listener on the namespace's IP (port 0: any). The
// socket belongs to the namespace it was created in, so it is made on a
// thread moved there; that thread is never handed back to the runtime
// (it exits with its goroutine), and the listener is used from anywhere.
func (n *NetNS) Listen(port int) (net.Listener, error) {
	type result struct {
		l   net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread has left this namespace
		f, err := os.Open("/var/run/netns/" + n.name)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("setns %s: %w", n.name, err)}
			return
		}
		l, err := net.Listen("tcp", net.JoinHostPort(n.IP, fmt.Sprint(port)))
		done <- result{l, err}
	}()
	r := <-done
	return r.l, r.err
}

// Serve serves h on port of the namespace's IP until the test ends; it
// returns the address, IP:port.
func (n *NetNS) Serve(t testing.TB, port int, h http.Handler) string {
	t.Helper()
	l, err := n.Listen(port)
	if err != nil {
		t.Fatalf("kubetest: listening in %s: %v", n.name, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("kubetest: closing server: %v", err)
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("kubetest: server: %v", err)
		}
	})
	return l.Addr().String()
}
