package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemoInRealTerminal builds the real binary, runs `tokentop demo` in a
// real terminal (tmux, 160×50, 256 colours), and checks that the three
// endpoints and their figures appear, that the detail view opens, and that
// q quits (the pane closes, so the terminal was handed back).
func TestDemoInRealTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it for several seconds")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed (apt-get install tmux)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tokentop")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tm("new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50",
		"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, "demo"); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })

	screen := waitScreen(t, tm, 40*time.Second, func(s string) bool {
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
	waitScreen(t, tm, 10*time.Second, func(s string) bool {
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
	t.Fatal("tokentop did not exit on q")
}

// waitScreen polls the pane until ok accepts it.
func waitScreen(t *testing.T, tm func(...string) (string, error), limit time.Duration, ok func(string) bool) string {
	t.Helper()
	var last string
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		out, err := tm("capture-pane", "-p", "-t", "e2e")
		if err == nil {
			last = out
			if ok(out) {
				return out
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("screen never showed what was expected; last screen:\n%s", last)
	return ""
}
