package promtest

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// VictoriaMetricsBinaryEnv names an environment variable that, when set, is
// the path of the victoria-metrics binary to use (or a missing path, to
// force the skip).
const VictoriaMetricsBinaryEnv = "VICTORIA_METRICS_BINARY"

// VictoriaMetricsInstallHint tells how to get the binary.
const VictoriaMetricsInstallHint = "install VictoriaMetrics (Debian/Ubuntu: apt-get install victoria-metrics), put a victoria-metrics binary on PATH, or set " + VictoriaMetricsBinaryEnv

// VictoriaMetricsBinary returns the path of the single-node VictoriaMetrics
// binary: $VICTORIA_METRICS_BINARY, else victoria-metrics on $PATH, else
// /usr/bin/victoria-metrics; "" when there is none.
func VictoriaMetricsBinary() string {
	return findBinary(VictoriaMetricsBinaryEnv, "victoria-metrics")
}

// StartVictoriaMetrics starts single-node VictoriaMetrics on a free
// loopback port with a temporary -storageDataPath, scraping targets every
// second (none: it only ingests, e.g. Prometheus remote write at
// RemoteWriteURL), or skips the test without a binary. Query flags keep
// their defaults, so -search.latencyOffset is 30s: the newest 30s are not
// visible to queries, as in a default deployment. The returned Server's
// query and wait helpers work against its Prometheus-compatible API.
func StartVictoriaMetrics(t testing.TB, targets ...Target) *Server {
	t.Helper()
	return startVictoriaMetrics(t, nil, targets)
}

// StartVictoriaMetricsUnlagged is StartVictoriaMetrics with
// -search.latencyOffset=0s: queries see samples once ingested, for tests
// of what a query selects rather than of a lagging store (the default
// offset makes each wait 30 s longer).
func StartVictoriaMetricsUnlagged(t testing.TB, targets ...Target) *Server {
	t.Helper()
	return startVictoriaMetrics(t, []string{"-search.latencyOffset=0s"}, targets)
}

func startVictoriaMetrics(t testing.TB, flags []string, targets []Target) *Server {
	t.Helper()
	bin := VictoriaMetricsBinary()
	if bin == "" {
		t.Skip("victoria-metrics binary not found: " + VictoriaMetricsInstallHint)
	}
	cfg, err := scrapeConfig(targets)
	if err != nil {
		t.Fatalf("promtest: %v", err)
	}
	return launch(t, "victoria-metrics", cfg, func(addr, data, cfgPath string) *exec.Cmd {
		args := append([]string{"-httpListenAddr=" + addr, "-storageDataPath=" + data, "-loggerLevel=WARN"}, flags...)
		if len(targets) > 0 {
			args = append(args, "-promscrape.config="+cfgPath)
		}
		return exec.Command(bin, args...)
	})
}

// StartRemoteWriting starts Prometheus as Start does, also sending every
// sample it scrapes by remote write to writeURL (say a VictoriaMetrics'
// RemoteWriteURL): both stores then hold the same samples.
func StartRemoteWriting(t testing.TB, writeURL string, targets ...Target) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("prometheus binary not found: " + InstallHint)
	}
	u, err := url.Parse(writeURL)
	if err != nil || u.Host == "" {
		t.Fatalf("promtest: remote write URL %q is not a URL", writeURL)
	}
	cfg, err := config(targets)
	if err != nil {
		t.Fatalf("promtest: %v", err)
	}
	// Send each sample within about a second, as a tuned deployment does.
	cfg += fmt.Sprintf("remote_write:\n  - url: %q\n    queue_config:\n      batch_send_deadline: 1s\n", writeURL)
	return launch(t, "prometheus", cfg, prometheusCommand(bin))
}

// RemoteWriteURL is the Prometheus remote-write endpoint of a
// VictoriaMetrics server.
func (s *Server) RemoteWriteURL() string { return s.URL + "/api/v1/write" }

// Kill ends the server at once (SIGKILL), as a crash would, and waits for
// it; queries then fail with "connection refused".
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("promtest: killing %s: %v", s.name, err)
	}
	<-s.exited
}

// scrapeConfig renders the scrape configuration VictoriaMetrics reads: the
// Prometheus one without evaluation_interval, which it does not know.
func scrapeConfig(targets []Target) (string, error) {
	cfg, err := config(targets)
	if err != nil {
		return "", err
	}
	var out []string
	for _, line := range strings.Split(cfg, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "evaluation_interval:") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n"), nil
}
