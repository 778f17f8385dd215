package gpu

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/telemetry/telemetrytest"
)

// collector keeps every observation (a concurrency-safe Sink).
type collector = telemetrytest.Collector

func get(t *testing.T, obs []telemetry.Observation, ep string, sig telemetry.Signal) telemetry.Observation {
	t.Helper()
	var found []telemetry.Observation
	for _, o := range obs {
		if o.Endpoint == ep && o.Signal == sig {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s %s, got %d in %+v", ep, sig, len(found), obs)
	}
	return found[0]
}

func statusOf(t *testing.T, obs []telemetry.Observation) *telemetry.SourceStatus {
	t.Helper()
	for _, o := range obs {
		if o.Kind == telemetry.KindSource {
			return o.Status
		}
	}
	t.Fatal("no status")
	return nil
}

func fixture(t *testing.T) string {
	t.Helper()
	return fixtures.Read(t, "metrics", "dcgm-exporter-metrics.txt")
}

func serve(t *testing.T, body *string, mu *sync.Mutex) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if *body == "500" {
			http.Error(w, "exporter down", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(*body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Values read from dcgm-exporter-metrics.txt: the T4 on host 424773df46e0
// has MEM_COPY_UTIL 0 and FB_USED 0 and no DRAM_ACTIVE; the A10G (pod
// ray-1111111, namespace ray-llm) has DRAM_ACTIVE 0.000003 only; the T4
// on 551bdf382151 has only FB_TOTAL, FB_RESERVED and the power limit.
func TestDCGMFixture(t *testing.T) {
	body, mu := fixture(t), &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	d := New(Config{URL: srv.URL, Targets: []Target{
		{Endpoint: "t4", Host: "424773DF46E0"},
		{Endpoint: "a10g", Pod: "ray-1111111", Namespace: "ray-llm"},
	}}, c)
	if err := d.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	if o := get(t, obs, "t4", telemetry.GPUMemBW); o.Kind != telemetry.KindSample || o.Value != 0 || !o.Approx {
		t.Fatalf("t4 bw %+v (MEM_COPY_UTIL busy time must be approx)", o)
	}
	if o := get(t, obs, "t4", FBUsedMiB); o.Value != 0 || o.Kind != telemetry.KindSample {
		t.Fatalf("t4 fb %+v", o)
	}
	if o := get(t, obs, "a10g", telemetry.GPUMemBW); o.Value != 0.000003 || o.Approx {
		t.Fatalf("a10g bw %+v", o)
	}
	if o := get(t, obs, "a10g", FBUsedMiB); o.Kind != telemetry.KindNoData {
		t.Fatalf("a10g fb %+v", o)
	}
	st := statusOf(t, obs)
	if st.State != telemetry.Live || len(st.Recognised) != 11 || !strings.Contains(st.Description, "3 GPU(s)") ||
		!strings.Contains(st.Description, "NVIDIA A10G") {
		t.Fatalf("status %+v", st)
	}
	for _, o := range obs {
		if o.Source != "dcgm:"+srv.URL+"/metrics" || o.Interval != DefaultInterval {
			t.Fatalf("observation %+v", o)
		}
	}
}

const twoGPUs = `# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge
DCGM_FI_PROF_DRAM_ACTIVE{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",hostname="h1"} 0.4
DCGM_FI_PROF_DRAM_ACTIVE{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3",hostname="h1"} 0.6
DCGM_FI_PROF_DRAM_ACTIVE{gpu="2",UUID="GPU-c",modelName="NVIDIA H100 80GB HBM3",hostname="h1"} 9223372036854775794
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",hostname="h1"} 1000
DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-b",modelName="NVIDIA H100 80GB HBM3",hostname="h1"} 3000
DCGM_FI_DEV_FB_USED{gpu="2",UUID="GPU-c",modelName="NVIDIA H100 80GB HBM3",hostname="h1"} 9223372036854775794
`

func TestDCGMMappingAverageSumSentinel(t *testing.T) {
	body, mu := twoGPUs, &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	d := New(Config{URL: srv.URL, EmitUnmapped: true, Targets: []Target{
		{Endpoint: "both", Host: "h1.cluster.local", GPUs: []string{"0", "GPU-b"}},
		{Endpoint: "sel", Selectors: []map[string]string{{"uuid": "GPU-a"}}},
		{Endpoint: "sentinel", GPUs: []string{"2"}},
		{Endpoint: "nothing", Host: "h2"},
	}}, c)
	if err := d.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	obs := c.Take()
	if o := get(t, obs, "both", telemetry.GPUMemBW); math.Abs(o.Value-0.5) > 1e-12 || o.Approx {
		t.Fatalf("average %+v", o)
	}
	if o := get(t, obs, "both", FBUsedMiB); o.Value != 4000 {
		t.Fatalf("sum %+v", o)
	}
	if o := get(t, obs, "sel", telemetry.GPUMemBW); o.Value != 0.4 {
		t.Fatalf("selector %+v", o)
	}
	if o := get(t, obs, "sentinel", telemetry.GPUMemBW); o.Kind != telemetry.KindNoData {
		t.Fatalf("sentinel %+v", o)
	}
	if o := get(t, obs, "nothing", telemetry.GPUMemBW); o.Kind != telemetry.KindNoData {
		t.Fatalf("empty target %+v", o)
	}
	for _, o := range obs {
		if strings.HasPrefix(o.Endpoint, "gpu:") {
			t.Fatalf("all GPUs are mapped, got %+v", o)
		}
	}

	// Unmapped GPUs: a warning, or gpu:<host> endpoints when asked.
	body = twoGPUs
	d2 := New(Config{URL: srv.URL, Targets: []Target{{Endpoint: "one", GPUs: []string{"0"}}}}, c)
	_ = d2.ScrapeOnce(context.Background())
	if st := statusOf(t, c.Take()); len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "2 GPU(s) not mapped") {
		t.Fatalf("status %+v", st)
	}
	d3 := New(Config{URL: srv.URL, EmitUnmapped: true}, c)
	_ = d3.ScrapeOnce(context.Background())
	obs = c.Take()
	if o := get(t, obs, "gpu:h1", telemetry.GPUMemBW); math.Abs(o.Value-0.5) > 1e-12 {
		t.Fatalf("unmapped %+v", o)
	}
	if o := get(t, obs, "gpu:h1", ""); o.Kind != telemetry.KindEndpoint {
		t.Fatalf("unmapped endpoint %+v", o)
	}
}

func TestDCGMFailureKeepsEndpoints(t *testing.T) {
	body, mu := twoGPUs, &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	d := New(Config{URL: srv.URL, Targets: []Target{{Endpoint: "e", Host: "h1"}}}, c)
	_ = d.ScrapeOnce(context.Background())
	c.Take()
	mu.Lock()
	body = "500"
	mu.Unlock()
	if err := d.ScrapeOnce(context.Background()); err == nil {
		t.Fatal("no error")
	}
	obs := c.Take()
	if o := get(t, obs, "e", ""); o.Kind != telemetry.KindFailure || !strings.Contains(o.Err, "500") {
		t.Fatalf("failure %+v", o)
	}
	if st := statusOf(t, obs); st.State != telemetry.Error || st.Failures != 1 {
		t.Fatalf("status %+v", st)
	}
	mu.Lock()
	body = "garbage{\n"
	mu.Unlock()
	if err := d.ScrapeOnce(context.Background()); err == nil {
		t.Fatal("malformed page accepted")
	}
}

func TestDCGMRunStops(t *testing.T) {
	body, mu := twoGPUs, &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	d := New(Config{URL: srv.URL, Interval: 10 * time.Millisecond, EmitUnmapped: true}, c)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := d.Run(ctx); err == nil {
		t.Fatal("Run returned nil")
	}
	if n := len(c.Take()); n < 6 {
		t.Fatalf("only %d observations", n)
	}
}

func TestParseSMILine(t *testing.T) {
	r, err := parseSMILine("0, GPU-20c56d28-0da5, NVIDIA H100 80GB HBM3, 35, 40000, 81559, 97, 512.34, 700.00, 61", "node")
	if err != nil || r.index != "0" || r.uuid != "GPU-20c56d28-0da5" || r.model != "NVIDIA H100 80GB HBM3" ||
		r.busy != 0.35 || r.fbUsed != 40000 || r.key != "node/GPU-20c56d28-0da5" || r.memTotal() != 81559 ||
		r.util != 0.97 || r.power != 512.34 || r.powerLimit != 700 || r.temp != 61 {
		t.Fatalf("%+v %v", r, err)
	}
	// A GB10 (shared memory) reports no framebuffer and no power limit.
	r, err = parseSMILine("1, GPU-x, NVIDIA GB10, [N/A], [N/A], [N/A], 0, 5.04, [N/A], 39", "node")
	if err != nil || !math.IsNaN(r.busy) || !math.IsNaN(r.fbUsed) || !math.IsNaN(r.memTotal()) ||
		!math.IsNaN(r.powerLimit) || r.power != 5.04 || r.temp != 39 {
		t.Fatalf("%+v %v", r, err)
	}
	for _, bad := range []string{"", "No devices were found", "x, a, b, 1, 2, 3, 4, 5, 6, 7", "0, a, b, 1, 2, 3"} {
		if _, err := parseSMILine(bad, "node"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	r, _ = parseSMILine("0, GPU-\x1b[31m, NVIDIA\x07, 1, 2, 3, 4, 5, 6, 7", "node")
	if strings.ContainsAny(r.uuid+r.model, "\x1b\x07") {
		t.Fatal("unsanitised")
	}
}

// fakeSMI installs a fake nvidia-smi printing two GPUs per refresh.
func fakeSMI(t *testing.T, script string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

const loopScript = `#!/bin/sh
# args: --query-gpu=... --format=... -lms N
i=0
while [ $i -lt 50 ]; do
  echo "0, GPU-a, NVIDIA H100 80GB HBM3, 40, 1000, 81559, 90, 300.5, 700.00, 55"
  echo "1, GPU-b, NVIDIA H100 80GB HBM3, 60, 3000, 81559, 80, 250.25, 700.00, 57"
  i=$((i+1))
  sleep 0.02
done
`

func TestSMILoop(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	fakeSMI(t, loopScript)
	c := &collector{}
	s := NewSMI(SMIConfig{Host: "node", Interval: 20 * time.Millisecond, Targets: []Target{{Endpoint: "e", GPUs: []string{"0", "1"}}}}, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	var obs []telemetry.Observation
	for time.Now().Before(deadline) {
		obs = append(obs, c.Take()...)
		n := 0
		for _, o := range obs {
			if o.Kind == telemetry.KindSample && o.Signal == telemetry.GPUMemBW {
				n++
			}
		}
		if n >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Run returned nil")
	}
	var bw []telemetry.Observation
	for _, o := range obs {
		if o.Kind == telemetry.KindSample && o.Signal == telemetry.GPUMemBW {
			bw = append(bw, o)
		}
	}
	if len(bw) < 3 || math.Abs(bw[0].Value-0.5) > 1e-12 || !bw[0].Approx || bw[0].Source != "nvidia-smi:node" {
		t.Fatalf("samples %+v", bw)
	}
	for _, o := range obs {
		if o.Signal == FBUsedMiB && o.Value != 4000 {
			t.Fatalf("fb %+v", o)
		}
		if o.Signal == telemetry.GPUPower && (o.Value != 300.5+250.25 || o.Approx) {
			t.Fatalf("power %+v", o)
		}
		if o.Kind == telemetry.KindGPU && o.GPU.Index == "1" && (*o.GPU.PowerW != 250.25 || *o.GPU.TemperatureCelsius != 57 ||
			*o.GPU.MemTotalBytes != 81559*mib || *o.GPU.UtilRatio != 0.8 || o.GPU.Endpoints[0] != "e") {
			t.Fatalf("device %+v", o.GPU)
		}
	}
}

func TestSMIMissingIsQuiet(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	c := &collector{}
	s := NewSMI(SMIConfig{Host: "node", Targets: []Target{{Endpoint: "e"}}}, c)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = s.Run(ctx)
	obs := c.Take()
	if len(obs) != 1 || obs[0].Kind != telemetry.KindSource || obs[0].Status.Err != "nvidia-smi not found" {
		t.Fatalf("observations %+v", obs)
	}
	s.report(errNotFound) // a retry that fails the same way says nothing
	if n := len(c.Take()); n != 0 {
		t.Fatalf("%d repeated observations", n)
	}
}

func TestSMIFailingBinary(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	fakeSMI(t, "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\\''t communicate with the NVIDIA driver.\033[2J' >&2\nexit 9\n")
	c := &collector{}
	s := NewSMI(SMIConfig{Host: "node", Targets: []Target{{Endpoint: "e"}}}, c)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = s.Run(ctx)
	obs := c.Take()
	var st *telemetry.SourceStatus
	for _, o := range obs {
		if o.Kind == telemetry.KindSource {
			st = o.Status
		}
	}
	if st == nil || !strings.Contains(st.Err, "couldn't communicate") || strings.Contains(st.Err, "\x1b") {
		t.Fatalf("status %+v", st)
	}
	if o := get(t, obs, "e", ""); o.Kind != telemetry.KindFailure {
		t.Fatalf("failure %+v", o)
	}
}

// A dcgm URL may be the exporter's base or its /metrics page (as
// examples/ttftop.yaml writes it): both reach /metrics, never
// /metrics/metrics.
func TestDCGMURLWithOrWithoutMetricsPath(t *testing.T) {
	body := fixture(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	for _, u := range []string{srv.URL, srv.URL + "/", srv.URL + "/metrics", srv.URL + "/metrics/"} {
		c := &collector{}
		if err := New(Config{URL: u, EmitUnmapped: true}, c).ScrapeOnce(context.Background()); err != nil {
			t.Errorf("url %s: %v", u, err)
			continue
		}
		if st := statusOf(t, c.Take()); st.State != telemetry.Live || st.URL != srv.URL+"/metrics" {
			t.Errorf("url %s: status %s at %s, want live at %s/metrics", u, st.State, st.URL, srv.URL)
		}
	}
}
