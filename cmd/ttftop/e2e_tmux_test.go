//go:build integration

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/screentest"
)

// TestDemoInRealTerminal builds the real binary, runs `ttftop demo` in a
// real terminal (tmux, 160×50, 256 colours), and checks that the three
// endpoints and their figures appear, that the detail view opens, and that
// q quits (the pane closes, so the terminal was handed back).
func TestDemoInRealTerminal(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting
	bin, dir, tm := tmuxWithBinary(t)
	if out, err := tm("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50",
		"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, "demo"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}

	screen := waitPane(t, tm, "e2e", 40*time.Second, func(s string) bool {
		return strings.Contains(s, "Llama-3.1-8B") &&
			strings.Contains(s, "Qwen2.5-14B") && strings.Contains(s, "Llama-3.2-3B") &&
			strings.Contains(s, "ms/") && strings.Contains(s, "OK")
	})
	for _, want := range []string{"TTFT", "TPOT", "DRAM", "MBU", "vllm"} {
		if !strings.Contains(screen, want) {
			t.Errorf("main screen lacks %q:\n%s", want, screen)
		}
	}
	if _, err := tm("send-keys", "-t", "e2e", "Enter"); err != nil {
		t.Fatal(err)
	}
	waitPane(t, tm, "e2e", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "last probes") && strings.Contains(s, "live tokens")
	})
	if _, err := tm("send-keys", "-t", "e2e", "q"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := tm("has-session", "-t", "e2e"); err != nil {
			return // the program exited and tmux closed the pane
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatal("ttftop did not exit on q")
}

// tmuxWithBinary builds ttftop into a temporary folder and returns it,
// the folder, and a tmux client on a socket of its own (its server
// killed when the test ends). It skips under -short and without tmux.
func tmuxWithBinary(t *testing.T) (bin, dir string, tm func(...string) (string, error)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs it for several seconds")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed (apt-get install tmux)")
	}
	dir = t.TempDir()
	bin = buildTtftop(t)
	sock := filepath.Join(dir, "tmux.sock")
	tm = func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	return bin, dir, tm
}

// fleetModels are long, similar names, served by two simulators each;
// a third serves one model.
var fleetModels = []string{
	"meta-llama/Llama-3.1-8B-Instruct:8b", "meta-llama/Llama-3.1-8B-Instruct-FP8:8b",
	"meta-llama/Llama-3.1-70B-Instruct:70b", "meta-llama/Llama-3.1-70B-Instruct-FP8:70b",
	"Qwen/Qwen2.5-14B-Instruct:14b", "Qwen/Qwen2.5-14B-Instruct-AWQ:14b",
}

// TestFleetInRealTerminal runs the real binary's simulator three times
// (2 servers × 6 models with long, similar names, and a third with one)
// and the dashboard over them in tmux at 80×24 and 160×50, with a TPOT
// objective the 14B models miss. On both screens every endpoint row (its
// server said once, on the line above its group) and every alert line
// must name exactly one of the 13 endpoints, and each alert must say its
// objective and its value against the threshold.
func TestFleetInRealTerminal(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting
	bin, dir, tm := tmuxWithBinary(t)
	var urls, names []string
	for i, models := range [][]string{fleetModels, fleetModels, {"meta-llama/Llama-3.2-3B-Instruct:3b"}} {
		u := startFleetSim(t, bin, models, i)
		urls = append(urls, u)
		for _, m := range models {
			names = append(names, strings.TrimPrefix(u, "http://")+"/"+strings.SplitN(m, ":", 2)[0])
		}
	}
	sizes := map[string][2]string{"s80": {"80", "24"}, "s160": {"160", "50"}}
	for name, sz := range sizes {
		args := append([]string{"new-session", "-d", "-s", name, "-x", sz[0], "-y", sz[1],
			"env", "TERM=xterm-256color", "XDG_CONFIG_HOME=" + dir, bin, "dashboard"}, urls...)
		args = append(args, "--interval", "2s", "--slo-tpot", "18ms", "--slo-for", "4s")
		if out, err := tm(args...); err != nil {
			t.Fatalf("tmux: %v %s", err, out)
		}
	}
	for name := range sizes {
		t.Run(name, func(t *testing.T) {
			screen := waitPane(t, tm, name, 60*time.Second, func(s string) bool {
				return strings.Contains(s, "FIRING") && strings.Contains(s, "6 endpoints") && strings.Contains(s, "ms/")
			})
			rows, alerts := screentest.Apart(t, screen, names)
			if rows < 10 || alerts < 2 {
				t.Errorf("%d endpoint rows and %d alert lines read, want ≥ 10 and ≥ 2:\n%s", rows, alerts, screen)
			}
			if name == "s160" {
				if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(screen), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("\n%s", screen)
		})
	}
}

var simURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`)

// startFleetSim runs a simulator of models with a light load.
func startFleetSim(t *testing.T, bin string, models []string, seed int) string {
	t.Helper()
	return startSimBinary(t, bin, "--load", "1", "--seed", string(rune('1'+seed)), "--models", strings.Join(models, ","))
}

// startSimBinary runs `ttftop sim` with args on a free loopback port, without
// its DCGM exporter, and returns its URL, read from its banner.
func startSimBinary(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"sim", "--listen", "127.0.0.1:0", "--dcgm-listen", ""}, args...)...)
	sc := bufio.NewScanner(startUntilTestEnds(t, cmd, cmd.StdoutPipe))
	for sc.Scan() {
		if u := simURL.FindString(sc.Text()); u != "" {
			go func() { // keep draining the banner
				for sc.Scan() {
				}
			}()
			return u
		}
	}
	t.Fatalf("sim printed no URL (%v)", sc.Err())
	return ""
}

// waitPane polls one tmux pane until ok accepts it.
func waitPane(t *testing.T, tm func(...string) (string, error), pane string, limit time.Duration, ok func(string) bool) string {
	t.Helper()
	var last string
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if out, err := tm("capture-pane", "-p", "-t", pane); err == nil {
			last = out
			if ok(out) {
				return out
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("pane %s never showed what was expected; last screen:\n%s", pane, last)
	return ""
}
