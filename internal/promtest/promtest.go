// Package promtest runs a real Prometheus server for integration tests: it
// finds the binary, writes a config that scrapes the given loopback
// targets every second, starts it on a free loopback port with a temporary
// TSDB, waits until it is ready, and stops it when the test ends. Without a
// binary the test is skipped with instructions. Nothing depends on a system
// service.
package promtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/syncbuf"
)

// InstallHint tells how to get the binary.
const InstallHint = "install Prometheus (Debian/Ubuntu: apt-get install prometheus), put a prometheus binary on PATH, or set " + BinaryEnv

// ScrapeInterval is the scrape and evaluation interval of the server.
const ScrapeInterval = time.Second

// Target is one scrape target.
type Target struct {
	// Job is the job label; default "target<i>".
	Job string
	// URL is the full metrics URL, e.g. http://127.0.0.1:4321/metrics.
	URL string
	// Labels are extra target labels.
	Labels map[string]string
}

// Server is a running Prometheus.
type Server struct {
	// URL is the HTTP API root, http://127.0.0.1:<port>.
	URL    string
	name   string // prometheus, victoria-metrics
	data   string // its data directory, which no other server has
	cmd    *exec.Cmd
	log    *syncbuf.Buffer
	client *http.Client
	// exited is closed when the process has ended; waitErr is then set.
	exited  chan struct{}
	waitErr error
}

// BinaryEnv names an environment variable that, when set, is the path of
// the binary to use (a downloaded release, or a missing path to force the
// skip).
const BinaryEnv = "PROMETHEUS_BINARY"

// Binary returns the path of the prometheus binary: $PROMETHEUS_BINARY,
// else prometheus on $PATH, else /usr/bin/prometheus; "" when there is none.
func Binary() string { return findBinary(BinaryEnv, "prometheus") }

// findBinary returns $env when set (or "" when that is not an executable),
// else name on $PATH, else /usr/bin/name; "" when there is none.
func findBinary(env, name string) string {
	executable := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	if p, ok := os.LookupEnv(env); ok {
		if executable(p) {
			return p
		}
		return ""
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if debian := "/usr/bin/" + name; executable(debian) {
		return debian
	}
	return ""
}

// Start starts Prometheus scraping targets, or skips the test without a
// binary. It returns once the server is ready; see WaitTargetsUp.
func Start(t testing.TB, targets ...Target) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("prometheus binary not found: " + InstallHint)
	}
	cfg, err := config(targets)
	if err != nil {
		t.Fatalf("promtest: %v", err)
	}
	return launch(t, "prometheus", cfg, prometheusCommand(bin))
}

// prometheusCommand runs bin with a config, a TSDB and a listen address.
func prometheusCommand(bin string) func(addr, data, cfgPath string) *exec.Cmd {
	return func(addr, data, cfgPath string) *exec.Cmd {
		return exec.Command(bin,
			"--config.file="+cfgPath,
			"--storage.tsdb.path="+data,
			"--storage.tsdb.retention.time=1h",
			"--web.listen-address="+addr,
			"--log.level=warn",
		)
	}
}

// launch writes cfg to a temporary directory and starts the server that
// command builds for a free loopback address, a fresh data directory and
// the config path; it stops the server when the test ends.
func launch(t testing.TB, name, cfg string, command func(addr, data, cfgPath string) *exec.Cmd) *Server {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, name+".yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatalf("promtest: writing config: %v", err)
	}
	// A free port can be taken between probing and binding: retry.
	var lastErr error
	for range 3 {
		s, err := start(name, dir, cfgPath, command)
		if err == nil {
			t.Cleanup(func() {
				if err := s.stop(); err != nil {
					t.Errorf("promtest: stopping %s: %v", name, err)
				}
			})
			if err = s.waitReady(60 * time.Second); err == nil {
				err = s.checkOwn()
			}
			if err == nil {
				return s
			}
		}
		lastErr = err
	}
	t.Fatalf("promtest: %s did not start: %v", name, lastErr)
	return nil
}

func start(name, dir, cfgPath string, command func(addr, data, cfgPath string) *exec.Cmd) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	data, err := os.MkdirTemp(dir, "data-")
	if err != nil {
		return nil, err
	}
	log := &syncbuf.Buffer{}
	cmd := command(addr, data, cfgPath)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	s := &Server{URL: "http://" + addr, name: name, data: data, cmd: cmd, log: log,
		client: &http.Client{Timeout: 5 * time.Second}, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// config renders prometheus.yml: one job per target, scraped every second.
func config(targets []Target) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\nscrape_configs:\n",
		ScrapeInterval, ScrapeInterval, ScrapeInterval)
	for i, tg := range targets {
		u, err := url.Parse(tg.URL)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("target %q is not a URL", tg.URL)
		}
		job := tg.Job
		if job == "" {
			job = fmt.Sprintf("target%d", i)
		}
		path := u.Path
		if path == "" {
			path = "/metrics"
		}
		fmt.Fprintf(&b, "  - job_name: %q\n    scheme: %s\n    metrics_path: %q\n    static_configs:\n      - targets: [%q]\n",
			job, u.Scheme, path, u.Host)
		if len(tg.Labels) > 0 {
			b.WriteString("        labels:\n")
			for k, v := range tg.Labels {
				fmt.Fprintf(&b, "          %s: %q\n", k, v)
			}
		}
	}
	return b.String(), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// Log returns what the server wrote so far.
func (s *Server) Log() string { return s.log.String() }

// stop terminates the process (SIGTERM, then SIGKILL after 10s) and
// waits for it.
func (s *Server) stop() error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
		var exit *exec.ExitError
		if s.waitErr != nil && !errors.As(s.waitErr, &exit) {
			return s.waitErr
		}
		return nil // an exit status after SIGTERM is the expected end
	case <-time.After(10 * time.Second):
		if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		<-s.exited
		return fmt.Errorf("%s ignored SIGTERM for 10s; killed", s.name)
	}
}
