//go:build integration

package failuresuite

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
)

// store is a running Prometheus-compatible server scraping targets.
type store struct {
	url  string
	proc *process
}

// scrapeConfig is a Prometheus scrape config (VictoriaMetrics reads the
// same) scraping each host:port's /metrics every second.
func scrapeConfig(targets ...string) string {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
	for i, tg := range targets {
		fmt.Fprintf(&b, "  - job_name: target%d\n    static_configs:\n      - targets: [%q]\n", i, tg)
	}
	return b.String()
}

// startPrometheus starts a real Prometheus scraping targets (host:port)
// every second; unlike promtest.Start the scenario can kill it.
func startPrometheus(t *testing.T, targets ...string) *store {
	t.Helper()
	return startPrometheusConfig(t, writeFile(t, t.TempDir(), "prometheus.yml", scrapeConfig(targets...)))
}

// startPrometheusConfig starts a real Prometheus reading the scrape
// config at cfg (which the scenario may rewrite and reload with SIGHUP).
func startPrometheusConfig(t *testing.T, cfg string) *store {
	t.Helper()
	bin := promtest.Binary()
	if bin == "" {
		t.Skip("failure suite: prometheus not found: " + promtest.InstallHint)
	}
	dir := t.TempDir()
	return startStore(t, "prometheus", "/-/ready", "/api/v1/status/flags", func(addr string, attempt int) (string, string, []string) {
		data := filepath.Join(dir, fmt.Sprintf("tsdb%d", attempt))
		return bin, data, []string{"--config.file=" + cfg, "--storage.tsdb.path=" + data,
			"--storage.tsdb.retention.time=1h", "--web.listen-address=" + addr, "--log.level=warn"}
	})
}

// startVictoriaMetrics starts single-node VictoriaMetrics with its default
// flags (so its default -search.latencyOffset of 30 s) scraping targets
// every second.
func startVictoriaMetrics(t *testing.T, targets ...string) *store {
	t.Helper()
	return startVictoriaMetricsConfig(t, writeFile(t, t.TempDir(), "scrape.yml", scrapeConfig(targets...)))
}

// startVictoriaMetricsConfig starts single-node VictoriaMetrics scraping
// what the config at cfg says (reloaded on SIGHUP), with extra flags.
func startVictoriaMetricsConfig(t *testing.T, cfg string, flags ...string) *store {
	t.Helper()
	bin := requireBinary(t, "apt-get install victoria-metrics", "/usr/bin/victoria-metrics", "victoria-metrics")
	dir := t.TempDir()
	return startStore(t, "victoria-metrics", "/health", "/flags", func(addr string, attempt int) (string, string, []string) {
		data := filepath.Join(dir, fmt.Sprintf("data%d", attempt))
		return bin, data, append([]string{"-storageDataPath=" + data, "-httpListenAddr=" + addr, "-promscrape.config=" + cfg}, flags...)
	})
}

// startStore starts a store on a free port, retrying when the port was
// taken before it bound, and waits until ready answers 200 and its flags
// page names its own data directory (not another package's server that
// took the port first).
func startStore(t *testing.T, name, ready, flags string, argv func(addr string, attempt int) (bin, data string, args []string)) *store {
	t.Helper()
	var last error
	for attempt := range 3 {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		bin, data, args := argv(addr, attempt)
		p := startProcess(t, name, procOptions{dir: t.TempDir()}, bin, args...)
		s := &store{url: "http://" + addr, proc: p}
		if last = waitHTTP(s.url+ready, 60*time.Second); last == nil {
			if last = pageNames(s.url+flags, data); last == nil {
				return s
			}
		}
		if err := p.stop(5 * time.Second); err != nil {
			t.Logf("stopping a %s that did not start: %v", name, err)
		}
	}
	t.Fatalf("%s did not start: %v", name, last)
	return nil
}

// pageNames fetches url and checks that its body contains want.
func pageNames(url, want string) error {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	if err = errors.Join(err, resp.Body.Close()); err != nil {
		return err
	}
	if !strings.Contains(string(body), want) {
		return fmt.Errorf("%s does not name %s: another server took the port", url, want)
	}
	return nil
}
