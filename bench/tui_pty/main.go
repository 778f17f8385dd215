// Command tui_pty measures what the terminal UI costs over a slow link: it
// runs a command in a pseudo-terminal of a fixed size (TERM=xterm-256color,
// no COLORTERM, as over SSH), counts the bytes the command writes per
// second and its CPU % from /proc/<pid>/stat over a steady-state window
// after a warm-up, then quits it with "q".
//
//	tui_pty [-cols 160 -rows 50 -warmup 10s -measure 60s] -- ttftop demo
//	tui_pty -synthetic            # measures the TUI alone (see synth.go)
//
// Targets (bench/tui_bandwidth.sh): <= 4 KB/s and <= 3 % of one core.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
)

func main() {
	cols := flag.Int("cols", 160, "terminal columns")
	rows := flag.Int("rows", 50, "terminal rows")
	warmup := flag.Duration("warmup", 10*time.Second, "time before measuring")
	measure := flag.Duration("measure", 60*time.Second, "measured steady state")
	synthetic := flag.Bool("synthetic", false, "measure the TUI over a synthetic feed instead of a command")
	child := flag.Bool("synthetic-child", false, "internal: be the synthetic UI")
	endpoints := flag.Int("endpoints", 3, "synthetic: endpoints (the demo has 3)")
	window := flag.Duration("window", time.Minute, "synthetic: quantile and chart window (the demo's is 1m)")
	cpuprofile := flag.String("cpuprofile", "", "synthetic: write the UI's CPU profile to this file")
	keys := flag.String("keys", "", "typed 3 s after start, before the warm-up ends (e.g. $'\\r' opens the detail view)")
	flag.Parse()
	if *child {
		if err := runSynthetic(*endpoints, *window, *cpuprofile); err != nil {
			fmt.Fprintln(os.Stderr, "tui_pty:", err)
			os.Exit(1)
		}
		return
	}
	args := flag.Args()
	if *synthetic {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "tui_pty:", err)
			os.Exit(1)
		}
		args = []string{self, "-synthetic-child", "-endpoints", strconv.Itoa(*endpoints), "-window", window.String(),
			"-cpuprofile", *cpuprofile}
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: tui_pty [flags] -- command args… | tui_pty -synthetic")
		os.Exit(2)
	}
	res, err := run(args, *cols, *rows, *warmup, *measure, *keys)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tui_pty:", err)
		os.Exit(1)
	}
	fmt.Printf("bytes=%d seconds=%.1f bytes_per_s=%.0f cpu_pct=%.2f\n", res.bytes, res.secs, res.bytesPerSec(), res.cpuPct)
}

type result struct {
	bytes  int64
	secs   float64
	cpuPct float64
}

func (r result) bytesPerSec() float64 { return float64(r.bytes) / r.secs }

func run(args []string, cols, rows int, warmup, measure time.Duration, keys string) (result, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = terminalEnv(os.Environ())
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return result{}, fmt.Errorf("start in pty: %w", err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "tui_pty: close pty:", err)
		}
	}()
	// Runs before the pty closes (defers run last-in first-out).
	defer quit(cmd, f)
	var n atomic.Int64
	go func() {
		// Count every byte; the copy ends with EIO when the command exits.
		if _, err := io.Copy(countWriter{&n}, f); err != nil && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
			fmt.Fprintln(os.Stderr, "tui_pty: read pty:", err)
		}
	}()
	if keys != "" && warmup > 3*time.Second {
		time.Sleep(3 * time.Second)
		if _, err := f.Write([]byte(keys)); err != nil {
			return result{}, fmt.Errorf("type keys: %w", err)
		}
		warmup -= 3 * time.Second
	}
	time.Sleep(warmup)
	if err := alive(cmd); err != nil {
		return result{}, fmt.Errorf("during warm-up: %w", err)
	}
	t0, err := cpuTicks(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	b0, s0 := n.Load(), time.Now()
	time.Sleep(measure)
	if err := alive(cmd); err != nil {
		return result{}, fmt.Errorf("during measurement: %w", err)
	}
	t1, err := cpuTicks(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	b1, s1 := n.Load(), time.Now()
	secs := s1.Sub(s0).Seconds()
	return result{bytes: b1 - b0, secs: secs, cpuPct: (t1 - t0) / clkTck() / secs * 100}, nil
}

// terminalEnv is the SSH-like environment: 256 colours detected from
// TERM, no COLORTERM (OpenSSH does not forward it), no NO_COLOR.
func terminalEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TERM", "COLORTERM", "NO_COLOR", "TMUX", "SSH_TTY":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TERM=xterm-256color")
}

// alive fails when the command has exited (a zombie until Wait: its
// /proc entry remains, with state Z).
func alive(cmd *exec.Cmd) error {
	f, err := statFields(cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("command gone: %w", err)
	}
	if f[0] == "Z" || f[0] == "X" {
		return errors.New("command exited")
	}
	return nil
}

// statFields returns /proc/pid/stat from field 3 (state) on; the command
// name (field 2) may hold spaces, so fields count from its closing ")".
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, fmt.Errorf("read stat: %w", err)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, errors.New("malformed /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return nil, errors.New("short /proc stat")
	}
	return f, nil
}

// quit presses q, then waits; a command that ignores it is killed.
func quit(cmd *exec.Cmd, f *os.File) {
	if _, err := f.Write([]byte("q")); err != nil {
		fmt.Fprintln(os.Stderr, "tui_pty: send q:", err) // the kill below still ends it
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			fmt.Fprintln(os.Stderr, "tui_pty: command exit:", err)
		}
	case <-ctx.Done():
		if err := cmd.Process.Kill(); err != nil { // it ignored q: stop it
			fmt.Fprintln(os.Stderr, "tui_pty: kill:", err)
		}
		<-done // killed: its exit error says only that
	}
}

type countWriter struct{ n *atomic.Int64 }

func (c countWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// cpuTicks is utime+stime of pid (fields 14 and 15 of /proc/pid/stat).
func cpuTicks(pid int) (float64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	u, err := strconv.ParseFloat(f[11], 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	st, err := strconv.ParseFloat(f[12], 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return u + st, nil
}

// clkTck reads the kernel tick rate (USER_HZ), 100 on Linux everywhere
// that matters; getconf is asked in case.
func clkTck() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}
