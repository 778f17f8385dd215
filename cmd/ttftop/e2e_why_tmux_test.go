//go:build integration

package main

import (
	"strings"
	"testing"
	"time"
)

// faultAfter is when the simulator's prefill slows, from its start: the
// diagnosis's baselines need 30 s of healthy history first.
const faultAfter = 45 * time.Second

// TestCauseOnAlertLineInRealTerminal runs the real simulator with a fault
// (prefill 20× slower from 45 s) and the dashboard over it in tmux at
// 80×24 and 160×50, with a TTFT objective the fault breaks (p95 ≤ 80 ms
// over 20 s: healthy p50 is about 25 ms, the fault's 200 ms): the alert line
// must name the cause (the cause word at 80 columns, "why: prefill: …" at
// 160), and no screen before the fault names it. It logs the time from
// the fault to the cause on screen.
func TestCauseOnAlertLineInRealTerminal(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting for the fault
	bin, dir, tm := tmuxWithBinary(t)
	started := time.Now()
	url := startSimBinary(t, bin, "--load", "2", "--model", "m1:1b", "--event", "prefill_slow@45s,factor=20")
	fault := started.Add(faultAfter)
	sizes := map[string][2]string{"why80": {"80", "24"}, "why160": {"160", "50"}}
	for name, sz := range sizes {
		args := []string{"new-session", "-d", "-s", name, "-x", sz[0], "-y", sz[1],
			"env", "TERM=xterm-256color", "XDG_CONFIG_HOME=" + dir, bin, "dashboard", url,
			"--no-discover", "--interval", "1s", "--refresh", "1s", "--slo-ttft", "80ms", "--slo-window", "20s", "--slo-for", "3s"}
		if out, err := tm(args...); err != nil {
			t.Fatalf("tmux: %v %s", err, out)
		}
	}
	want := map[string]string{"why80": "· prefill", "why160": "· why: prefill: prompt processing grew"}
	// Both panes are read in turn every 300 ms, so each one's first
	// screen with the cause is timed, not only the one waited for first.
	seen := map[string]time.Duration{}
	screens := map[string]string{}
	deadline := fault.Add(90 * time.Second)
	for len(seen) < len(sizes) && time.Now().Before(deadline) {
		for name := range sizes {
			if _, ok := seen[name]; ok {
				continue
			}
			s, err := tm("capture-pane", "-p", "-t", name)
			if err != nil {
				continue
			}
			screens[name] = s
			if alertLineWith(s, want[name]) == "" {
				continue
			}
			if time.Now().Before(fault) {
				t.Fatalf("%s names the cause before the fault:\n%s", name, s)
			}
			seen[name] = time.Since(fault)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, name := range []string{"why80", "why160"} {
		d, ok := seen[name]
		if !ok {
			t.Errorf("%s: no alert line named the cause %.0fs after the fault; last screen:\n%s", name, time.Since(fault).Seconds(), screens[name])
			continue
		}
		line := alertLineWith(screens[name], want[name])
		if !strings.Contains(line, "TTFT") {
			t.Errorf("%s: the cause is not on the TTFT alert's line: %q", name, line)
		}
		t.Logf("%s: cause on the alert line %.1fs after the fault\n%s", name, d.Seconds(), screens[name])
	}
	// At 160 columns the model's row says it too, in its WHY cell.
	if s, ok := screens["why160"]; ok && whyCellWith(s, "m1", "prefill") == "" {
		t.Errorf("why160: no table row of m1 with prefill in its WHY cell:\n%s", s)
	}
}

// whyCellWith is the first table row (a line with an SLO badge, not an
// alert's "why:") of model whose last word is cause.
func whyCellWith(screen, model, cause string) string {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && strings.Contains(l, model) && !strings.Contains(l, "why:") && strings.HasPrefix(f[len(f)-1], cause) &&
			(f[len(f)-2] == "BREACH" || f[len(f)-2] == "PENDING") {
			return l
		}
	}
	return ""
}

// alertLineWith is the first screen line holding an alert state and s.
func alertLineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) && (strings.Contains(l, "PENDING") || strings.Contains(l, "FIRING")) {
			return l
		}
	}
	return ""
}
