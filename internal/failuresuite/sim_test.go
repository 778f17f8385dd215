//go:build integration

package failuresuite

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// simulator is a running `ttftop sim`.
type simulator struct {
	url  string // http://127.0.0.1:PORT
	addr string // 127.0.0.1:PORT
	proc *process
	// launched is just before the process started, ready when its banner
	// came: the scenario clock (--event offsets) starts in between.
	launched, ready time.Time
}

// simBanner is the first line `ttftop sim` prints once it listens.
var simBanner = regexp.MustCompile(`serving \d+ models? on (http://127\.0\.0\.1:\d+) `)

// startSim starts the simulator on addr ("127.0.0.1:0" for any free port)
// with the given flags (--model, --event, --load...). DCGM metrics are
// off: their default port would collide between parallel scenarios.
func startSim(t *testing.T, addr string, args ...string) *simulator {
	t.Helper()
	s, err := trySim(t, addr, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// restartSim starts the simulator again on the address a killed one had,
// retrying while the port is still being released.
func restartSim(t *testing.T, addr string, args ...string) *simulator {
	t.Helper()
	var last error
	for range 5 {
		s, err := trySim(t, addr, args...)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("restarting the simulator on %s: %v", addr, last)
	return nil
}

func trySim(t *testing.T, addr string, args ...string) (*simulator, error) {
	t.Helper()
	bin := ttftopBinary(t)
	argv := append([]string{"sim", "--listen", addr, "--dcgm-listen", ""}, args...)
	launched := time.Now()
	p := startProcess(t, "sim "+addr, procOptions{stopGrace: 5 * time.Second}, bin, argv...)
	var url string
	_, ok := eventually(30*time.Second, 50*time.Millisecond, func() bool {
		if m := simBanner.FindStringSubmatch(p.stdout.Text()); m != nil {
			url = m[1]
			return true
		}
		return p.hasExited()
	})
	if url == "" {
		if !ok {
			serr := p.stop(5 * time.Second)
			return nil, fmt.Errorf("sim %v printed no banner in 30 s (stopped: %v): %s", argv, serr, p.stderr.Text())
		}
		code, _ := p.waitExit(time.Second)
		return nil, fmt.Errorf("sim %v exited with code %d: %s", argv, code, p.stderr.Text())
	}
	s := &simulator{url: url, addr: strings.TrimPrefix(url, "http://"), proc: p, launched: launched, ready: time.Now()}
	if err := waitHTTP(s.url+"/v1/models", 20*time.Second); err != nil {
		return nil, fmt.Errorf("sim %v: %w", argv, err)
	}
	return s, nil
}

// waitHTTP polls url until it answers 200.
func waitHTTP(url string, limit time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	_, ok := eventually(limit, 100*time.Millisecond, func() bool {
		resp, err := client.Get(url)
		if err != nil {
			last = err
			return false
		}
		_, cerr := io.Copy(io.Discard, resp.Body)
		if err := resp.Body.Close(); err != nil {
			last = err
			return false
		}
		if cerr != nil {
			last = cerr
			return false
		}
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("%s answered %s", url, resp.Status)
			return false
		}
		return true
	})
	if !ok {
		return fmt.Errorf("%s not ready after %s: %v", url, limit, last)
	}
	return nil
}
