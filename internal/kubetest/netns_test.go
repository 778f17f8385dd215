//go:build integration

package kubetest

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// TestKubeNetNSServesOnItsOwnAddress: a handler served from a test-made
// network namespace answers at the namespace's address (not loopback),
// from this process, which stays in its own namespace.
func TestKubeNetNSServesOnItsOwnAddress(t *testing.T) {
	n := NewNetNS(t)
	addr := n.Serve(t, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "from the namespace")
	}))
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsLoopback() || host != n.IP {
		t.Fatalf("served at %s; want the namespace's IP %s", addr, n.IP)
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "from the namespace" {
		t.Fatalf("GET %s: %q, %v", addr, body, err)
	}
	// This process's own listeners are still in the host's namespace.
	l, err := net.Listen("tcp", net.JoinHostPort(n.IP, "0"))
	if err == nil {
		l.Close()
		t.Fatalf("listening on %s worked outside the namespace: the test process left its namespace", n.IP)
	}
}
