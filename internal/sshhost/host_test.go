//go:build integration

package sshhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/discover"
	"github.com/ttftop/ttftop/internal/discover/enginetest"
	"github.com/ttftop/ttftop/internal/sshhost/sshdtest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestRemoteDiscoveryThroughSSH: through a real sshd reached as "box"
// (~/.ssh/config: HostName, Port, User, IdentityFile,
// UserKnownHostsFile), the host's /proc is read and its engine process —
// a simulator named vllm with --port — found and fingerprinted through
// the connection.
func TestRemoteDiscoveryThroughSSH(t *testing.T) {
	d := sshdtest.Start(t)
	port := enginetest.FreePort(t)
	vllm := enginetest.Start(t, "vllm", enginetest.Sim, port, "serve", "m", "--port", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Setenv("SSH_AUTH_SOCK", "") // the key file, not whoever's agent
	h, err := Open(ctx, Target{Alias: "box"}, Options{Home: d.Home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	m, err := h.ReadMachine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := discover.FromMachine(ctx, m, discover.Options{Dial: h.Dial, Ports: []int{}, DCGMPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("vllm, pid %d, :%d from its --port", vllm.PID, port)
	for _, f := range r.Endpoints {
		if f.How == want {
			if f.Engine != telemetry.EngineVLLM || !f.Metrics || len(f.Models) == 0 {
				t.Errorf("found %+v: want vllm with /metrics and models", f)
			}
			return
		}
	}
	t.Errorf("not found through ssh: %q; found %+v, skipped %+v", want, r.Endpoints, r.Skipped)
}

// TestHostKeyChecked: an unknown host key is refused and says how to
// trust it; AcceptNew adds it to known_hosts; a changed key is refused
// even then.
func TestHostKeyChecked(t *testing.T) {
	d := sshdtest.Start(t)
	t.Setenv("SSH_AUTH_SOCK", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	d.ForgetHostKey(t)
	_, err := Open(ctx, Target{Alias: "box"}, Options{Home: d.Home})
	if err == nil || !strings.Contains(err.Error(), "is not known") || !strings.Contains(err.Error(), "--ssh-accept-new") {
		t.Fatalf("unknown host key: err = %v; want a refusal saying how to trust it", err)
	}
	h, err := Open(ctx, Target{Alias: "box"}, Options{Home: d.Home, AcceptNew: true})
	if err != nil {
		t.Fatalf("accept-new: %v", err)
	}
	_ = h.Close()
	if kh, err := os.ReadFile(d.KnownHosts); err != nil || !strings.Contains(string(kh), strings.Fields(d.HostKey)[1]) {
		t.Errorf("accept-new did not record the key: %q, %v", kh, err)
	}
	if h, err := Open(ctx, Target{Alias: "box"}, Options{Home: d.Home}); err != nil {
		t.Errorf("the accepted key is not trusted next time: %v", err)
	} else {
		_ = h.Close()
	}

	d.TrustOtherKey(t)
	_, err = Open(ctx, Target{Alias: "box"}, Options{Home: d.Home, AcceptNew: true})
	if err == nil || !strings.Contains(err.Error(), "CHANGED") {
		t.Errorf("changed host key: err = %v; want a refusal", err)
	}
}

// TestDroppedConnectionIsDownThenRecovers: the connection cut and the
// host unreachable, the host reads DOWN with its reason; reachable
// again, it reconnects (with backoff) and carries requests again.
func TestDroppedConnectionIsDownThenRecovers(t *testing.T) {
	d := sshdtest.Start(t)
	t.Setenv("SSH_AUTH_SOCK", "")
	port := enginetest.FreePort(t)
	enginetest.Start(t, "vllm", enginetest.Sim, port, "--port", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := Open(ctx, Target{Alias: "box"}, Options{Home: d.Home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	client := &http.Client{Transport: &http.Transport{DialContext: h.Dial, DisableKeepAlives: true}}
	models := "http://127.0.0.1:" + strconv.Itoa(port) + "/v1/models"
	if err := get(ctx, client, models); err != nil {
		t.Fatalf("through the tunnel: %v", err)
	}

	d.Proxy.Refuse(true)
	d.Proxy.Cut()
	var down *DownError
	waitFor(t, "the host to read DOWN", func() bool { return errors.As(h.Check(ctx), &down) })
	if !strings.Contains(down.Error(), "DOWN") || down.Cause == nil {
		t.Errorf("down error %q: want DOWN and its cause", down)
	}
	if err := get(ctx, client, models); err == nil {
		t.Error("a request through a down host succeeded")
	}

	d.Proxy.Refuse(false)
	waitFor(t, "the host to reconnect", func() bool { return h.Check(ctx) == nil })
	if err := get(ctx, client, models); err != nil {
		t.Errorf("after reconnecting: %v", err)
	}
}

func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return err
}

// waitFor polls cond with a deadline (the backoff reaches seconds).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
}

// TestHostCommands: the host's nvidia-smi is seen by ReadMachine and run
// by Start over the connection, its arguments quoted for the host's
// shell; a failing command's error carries its stderr.
func TestHostCommands(t *testing.T) {
	d := sshdtest.Start(t)
	t.Setenv("SSH_AUTH_SOCK", "")
	script := "#!/bin/sh\n[ \"$1\" = \"it's --one\" ] || { echo \"bad field $1\" >&2; exit 2; }\necho \"0, GPU-a\"\n"
	if err := os.WriteFile(filepath.Join(d.Bin, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := Open(ctx, Target{Alias: "box"}, Options{Home: d.Home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if m, err := h.ReadMachine(ctx); err != nil || !m.NvidiaSMI {
		t.Errorf("ReadMachine: nvidia-smi %v, %v: want it seen on box", m.NvidiaSMI, err)
	}
	out, wait, err := h.Start(ctx, []string{"nvidia-smi", "it's --one"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(out)
	if err := errors.Join(err, wait()); err != nil || string(b) != "0, GPU-a\n" {
		t.Errorf("Start: %q, %v: want the script's line", b, err)
	}
	out, wait, err = h.Start(ctx, []string{"nvidia-smi", "--two"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(out); err != nil {
		t.Fatal(err)
	}
	if err := wait(); err == nil || err.Error() != "on box: bad field --two" {
		t.Errorf("failing command: %v; want its stderr", err)
	}
}
