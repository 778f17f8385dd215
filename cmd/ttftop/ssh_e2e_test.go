//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sshhost/sshdtest"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/telemetry"
)

// readout is the part of a JSON read-out these tests read.
type readout struct {
	Endpoints []telemetry.EndpointSnapshot `json:"endpoints"`
	Sources   []telemetry.SourceStatus     `json:"sources"`
}

// startSSHBox starts a real sshd reached as "box" from a temporary HOME, and the
// simulator on a loopback port of that "host".
func startSSHBox(t *testing.T) (d *sshdtest.SSHD, simPort int) {
	t.Helper()
	d = sshdtest.Start(t)
	t.Setenv("HOME", d.Home)
	t.Setenv("SSH_AUTH_SOCK", "") // the key file, not whoever's agent
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	return d, lastPort(t, startSim(t, model(sim.DemoHealthy)))
}

// TestSnapshotThroughSSH: `ttftop snapshot ssh://box` discovers the
// host's simulator over the connection, probes and scrapes it through
// it, and the JSON says how it was found and that its figures include
// the tunnel.
func TestSnapshotThroughSSH(t *testing.T) {
	_, simPort := startSSHBox(t)
	code, out, errs := runCmd(t, "snapshot", "--json", "--duration", "5s", "--interval", "500ms", "--max-tokens", "8",
		"--discover-ports", fmt.Sprint(simPort), "ssh://box")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var doc readout
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	name := fmt.Sprintf("box:%d/%s", simPort, sim.DemoHealthy)
	var ep *telemetry.EndpointSnapshot
	for i := range doc.Endpoints {
		if doc.Endpoints[i].Name == name {
			ep = &doc.Endpoints[i]
		}
	}
	if ep == nil {
		t.Fatalf("no endpoint %s in:\n%s\nstderr:\n%s", name, out, errs)
	}
	if ep.Labels["found"] != fmt.Sprintf(":%d, a well-known port on box", simPort) || !strings.HasPrefix(ep.Labels["via"], "ssh://box") {
		t.Errorf("labels %v: want found on box, via ssh://box", ep.Labels)
	}
	if s, ok := ep.Signals[telemetry.TTFT]; !ok || !strings.HasPrefix(s.Source, "probe:") || s.Count == 0 {
		t.Errorf("no probed TTFT through the tunnel: %+v", ep.Signals[telemetry.TTFT])
	}
	if len(ep.Server) == 0 {
		t.Errorf("no server figures: /metrics not scraped through the tunnel")
	}
	if st, ok := sourceNamed(doc.Sources, "ssh box"); !ok || st.State != telemetry.Live {
		t.Errorf("source ssh box: %+v (found %v); want live", st, ok)
	}
}

// TestDashboardSSHHostDownThenRecovers: the connection cut mid-run, the
// dashboard keeps refreshing and reads the host DOWN with its reason,
// then live again once it reconnects.
func TestDashboardSSHHostDownThenRecovers(t *testing.T) {
	d, simPort := startSSHBox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errs syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--json", "--refresh", "300ms", "--interval", "500ms", "--max-tokens", "8",
			"--discover-ports", fmt.Sprint(simPort), "ssh://box"}, &out, &errs)
	}()
	last := func() (doc readout) {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		_ = json.Unmarshal([]byte(lines[len(lines)-1]), &doc) // a partial line: nothing yet
		return doc
	}
	state := func() (telemetry.SourceStatus, bool) { return sourceNamed(last().Sources, "ssh box") }
	// The probes go through the connection: with it down, they fail.
	probeFailing := func() bool {
		for _, ep := range last().Endpoints {
			if strings.HasPrefix(ep.Name, "box:") && ep.Signals[telemetry.ErrorRate].NewestFailed {
				return true
			}
		}
		return false
	}
	waitUntil(t, time.Minute, "the host live", func() bool { st, ok := state(); return ok && st.State == telemetry.Live })
	d.Proxy.Refuse(true)
	d.Proxy.Cut()
	waitUntil(t, time.Minute, "the host DOWN", func() bool {
		st, ok := state()
		return ok && st.State == telemetry.Error && strings.Contains(st.Err, "DOWN")
	})
	waitUntil(t, time.Minute, "the probes through the dropped connection to fail", probeFailing)
	d.Proxy.Refuse(false)
	waitUntil(t, time.Minute, "the host live again", func() bool { st, ok := state(); return ok && st.State == telemetry.Live })
	waitUntil(t, time.Minute, "the probes to succeed again", func() bool { return !probeFailing() })
	cancel()
	<-done
}

func sourceNamed(sources []telemetry.SourceStatus, name string) (telemetry.SourceStatus, bool) {
	for _, s := range sources {
		if s.Name == name {
			return s, true
		}
	}
	return telemetry.SourceStatus{}, false
}

// TestConfigSSHTargets: the config file's ssh: list is read as the
// command line's ssh:// targets.
func TestConfigSSHTargets(t *testing.T) {
	_, simPort := startSSHBox(t)
	conf := t.TempDir() + "/ttftop.yaml"
	if err := os.WriteFile(conf, []byte("ssh: [ssh://box]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "snapshot", "--json", "--duration", "3s", "--interval", "500ms", "--max-tokens", "8",
		"--discover-ports", fmt.Sprint(simPort), "--config", conf)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var doc readout
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if st, ok := sourceNamed(doc.Sources, "ssh box"); !ok || st.State != telemetry.Live {
		t.Errorf("source ssh box: %+v (found %v); want live\n%s", st, ok, errs)
	}
}

// TestProbeThroughSSH: `ttftop probe ssh://box` finds the host's
// simulator over the connection and probes it through the tunnel; its
// JSON says how the endpoint was found and that the figures include the
// tunnel.
func TestProbeThroughSSH(t *testing.T) {
	d, simPort := startSSHBox(t)
	code, out, errs := runCmd(t, "probe", "--json", "-n", "3", "--max-tokens", "8",
		"--discover-ports", fmt.Sprint(simPort), "ssh://box")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var doc probeSummaryJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Completed != 3 || doc.MedianTTFTms == nil {
		t.Errorf("completed %d, median TTFT %v: want 3 requests measured through the tunnel\n%s", doc.Completed, doc.MedianTTFTms, errs)
	}
	if doc.Found != fmt.Sprintf(":%d, a well-known port on box", simPort) || !strings.HasPrefix(doc.Via, "ssh://box") {
		t.Errorf("found %q via %q: want found on box, via ssh://box", doc.Found, doc.Via)
	}
	if !strings.Contains(errs, "found http://127.0.0.1:") {
		t.Errorf("stderr does not say what was found on box:\n%s", errs)
	}
	// Discovery's fingerprint opens two channels (the model list and
	// /metrics, each its own client); the probe's requests are more.
	if n := d.Tunnelled(t, simPort); n <= 2 {
		t.Errorf("sshd opened %d channels to the simulator: the probe did not go through the tunnel", n)
	}
}

// TestCheckThroughSSH: `ttftop check ssh://box` measures the host's
// simulator through the tunnel, judges it, and its JSON says how each
// endpoint was found.
func TestCheckThroughSSH(t *testing.T) {
	_, simPort := startSSHBox(t)
	code, out, errs := runCmd(t, "check", "--json", "-n", "3", "--max-tokens", "8",
		"--discover-ports", fmt.Sprint(simPort), "ssh://box")
	var doc checkReportJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, out, errs)
	}
	name := fmt.Sprintf("box:%d", simPort)
	if len(doc.Found) != 1 || doc.Found[0].Endpoint != name || !strings.HasSuffix(doc.Found[0].Found, "on box") ||
		!strings.HasPrefix(doc.Found[0].Via, "ssh://box") {
		t.Errorf("found %+v: want %s found on box, via ssh://box", doc.Found, name)
	}
	measured := 0
	for _, r := range doc.Results {
		if ep, _ := r["endpoint"].(string); !strings.HasPrefix(ep, name+"/") {
			t.Errorf("result on %q: want the endpoint on box", ep)
		}
		if r["measured"] == true {
			measured++
		}
	}
	if measured == 0 {
		t.Errorf("nothing measured through the tunnel (exit %d):\n%s\n%s", code, out, errs)
	}
}

// hostSMI is the nvidia-smi of the test's ssh host: it answers only the
// query the nvidia-smi source sends (else it fails as nvidia-smi does
// on a bad field), one line per refresh. The line is in the format of
// the source's own tests (sources/gpu): index, uuid, name, memory busy
// %, used MiB, total MiB, util %, power W, power limit W, temperature.
const hostSMI = `#!/bin/sh
[ "$1" = "--query-gpu=index,uuid,name,utilization.memory,memory.used,memory.total,utilization.gpu,power.draw,power.limit,temperature.gpu" ] ||
  { echo "Field \"$1\" is not a valid field to query." >&2; exit 2; }
while echo "0, GPU-5e1f, NVIDIA H200, 37, 61234, 143771, 92, 412.50, 700.00, 58"; do sleep 0.2; done
`

// TestSnapshotThroughSSHReadsHostGPUs: an ssh:// host with nvidia-smi
// has its GPUs read by running it over the connection, named by the host
// and joined to the endpoints found there.
func TestSnapshotThroughSSHReadsHostGPUs(t *testing.T) {
	d, simPort := startSSHBox(t)
	if err := os.WriteFile(filepath.Join(d.Bin, "nvidia-smi"), []byte(hostSMI), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "snapshot", "--json", "--duration", "4s", "--interval", "500ms", "--max-tokens", "8",
		"--discover-ports", fmt.Sprint(simPort), "ssh://box")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	var doc struct {
		GPUs    []telemetry.GPUDevice    `json:"gpus"`
		Sources []telemetry.SourceStatus `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	name := fmt.Sprintf("box:%d/%s", simPort, sim.DemoHealthy)
	if len(doc.GPUs) != 1 {
		t.Fatalf("GPUs %+v: want box's one GPU\n%s", doc.GPUs, errs)
	}
	g := doc.GPUs[0]
	if g.Host != "box" || g.Source != "nvidia-smi:box" || g.Name != "NVIDIA H200" || g.PowerW == nil || *g.PowerW != 412.5 {
		t.Errorf("GPU %+v: want box's H200 at 412.5 W from nvidia-smi:box", g)
	}
	if !slices.Contains(g.Endpoints, name) {
		t.Errorf("GPU joined to %v: want %s", g.Endpoints, name)
	}
	if st, ok := sourceNamed(doc.Sources, "nvidia-smi box"); !ok || st.State != telemetry.Live {
		t.Errorf("source %+v: want live", st)
	}
}

// TestSSHHostDCGMThroughTunnel: a dcgm-exporter on the ssh:// host
// (a real capture served there) is found and scraped through the
// connection, its source names the host, and its GPU is joined to the
// endpoints found there. (The port is the test's: :9400 is not ours.)
func TestSSHHostDCGMThroughTunnel(t *testing.T) {
	d, simPort := startSSHBox(t)
	capture := fixtures.Read(t, "metrics", "dcgm-exporter-metrics.txt")
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, capture)
	}))
	t.Cleanup(exporter.Close)
	u, err := url.Parse(exporter.URL)
	if err != nil {
		t.Fatal(err)
	}
	dcgmPort, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	var f sourceFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f.bind(fs)
	if err := fs.Parse([]string{"--discover-ports", fmt.Sprint(simPort), "--interval", "500ms", "--max-tokens", "8"}); err != nil {
		t.Fatal(err)
	}
	f.ssh.dcgmPort = dcgmPort
	var stderr syncbuf.Buffer
	m, _, err := f.open([]string{"ssh://box"}, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	name := fmt.Sprintf("box:%d/%s", simPort, sim.DemoHealthy)
	// The capture is of several exporters' GPUs (T4s and an A10G): every
	// one is the host's, joined to its endpoint.
	joined := func(gpus []telemetry.GPUDevice) bool {
		for _, g := range gpus {
			if !slices.Contains(g.Endpoints, name) || !strings.HasPrefix(g.Source, "dcgm:ssh://box ") {
				return false
			}
		}
		return len(gpus) == 3
	}
	var gpus []telemetry.GPUDevice
	for ctx.Err() == nil {
		if gpus = m.Store.Snapshot(time.Now(), time.Minute).GPUs; joined(gpus) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling the store, bounded by ctx
	}
	cancel()
	<-done
	if !joined(gpus) {
		t.Fatalf("GPUs %+v: want the capture's three from dcgm:ssh://box, joined to %s\n%s", gpus, name, stderr.String())
	}
	// Discovery asked once; the scrapes are more.
	if n := d.Tunnelled(t, dcgmPort); n < 2 {
		t.Errorf("sshd opened %d channels to the exporter: not scraped through the tunnel", n)
	}
}

// TestSweepThroughSSH: `ttftop sweep ssh://box` finds the host's
// simulator and sweeps it through the tunnel.
func TestSweepThroughSSH(t *testing.T) {
	d, simPort := startSSHBox(t)
	code, out, errs := runCmd(t, "sweep", "--json", "--max-concurrency", "1", "--min-requests", "3", "--max-step-time", "10s",
		"--max-tokens", "8", "--discover-ports", fmt.Sprint(simPort), "ssh://box")
	// One step finds no knee (exit 1, a single closed-loop stream rarely
	// keeps 90 % in flight); the step itself is what is looked at here.
	var doc struct {
		Steps []struct {
			Concurrency int `json:"concurrency"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Steps) != 1 || code == 2 {
		t.Fatalf("exit %d, %v: want one step measured\n%s\n%s", code, err, out, errs)
	}
	if !strings.Contains(errs, fmt.Sprintf("ssh://box: found http://127.0.0.1:%d", simPort)) {
		t.Errorf("stderr does not say what was found on box:\n%s", errs)
	}
	// Discovery's fingerprint opens two channels; the sweep's requests more.
	if n := d.Tunnelled(t, simPort); n <= 2 {
		t.Errorf("sshd opened %d channels to the simulator: the sweep did not go through the tunnel", n)
	}
}
