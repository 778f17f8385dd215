//go:build integration

package failuresuite

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// line is one line a process wrote, with when the test read it.
type line struct {
	at   time.Time
	text string
}

// lineLog collects a process's output line by line as it arrives; onLine,
// when set, sees every complete line (exec's copying goroutine calls
// Write, so onLine runs on one goroutine at a time).
type lineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []line
	onLine  func(line)
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.partial = append(l.partial, p...)
	var done []line
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		ln := line{at: time.Now(), text: strings.TrimRight(string(l.partial[:i]), "\r")}
		l.partial = l.partial[i+1:]
		l.lines = append(l.lines, ln)
		done = append(done, ln)
	}
	cb := l.onLine
	l.mu.Unlock()
	if cb != nil {
		for _, ln := range done {
			cb(ln)
		}
	}
	return len(p), nil
}

// Lines returns every complete line so far.
func (l *lineLog) Lines() []line {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]line(nil), l.lines...)
}

// Text is everything written so far, the unfinished line included.
func (l *lineLog) Text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, ln := range l.lines {
		b.WriteString(ln.text)
		b.WriteByte('\n')
	}
	b.Write(l.partial)
	return b.String()
}

// Tail is the last n lines, each cut to max bytes, for failure messages.
func (l *lineLog) Tail(n, max int) string {
	lines := l.Lines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, ln := range lines {
		s := ln.text
		if len(s) > max {
			s = s[:max] + "…"
		}
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

// process is a child the test started; it is always stopped and waited
// for when the test ends.
type process struct {
	name    string
	cmd     *exec.Cmd
	stdout  *lineLog
	stderr  *lineLog
	started time.Time
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// procOptions tune startProcess.
type procOptions struct {
	dir    string
	env    []string   // added to the test's environment
	onLine func(line) // sees each stdout line
	// stopGrace is how long the cleanup waits after SIGTERM before
	// SIGKILL; default 10 s.
	stopGrace time.Duration
}

// startProcess starts bin and registers its stop with t.Cleanup.
func startProcess(t testing.TB, name string, opts procOptions, bin string, args ...string) *process {
	t.Helper()
	p, err := launch(name, opts, bin, args...)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() { p.cleanup(t, opts.stopGrace) })
	return p
}

func launch(name string, opts procOptions, bin string, args ...string) (*process, error) {
	p := &process{name: name, stdout: &lineLog{onLine: opts.onLine}, stderr: &lineLog{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = opts.dir
	p.cmd.Env = append(os.Environ(), opts.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// cleanup stops the process if it still runs, and says what it wrote when
// the test failed.
func (p *process) cleanup(t testing.TB, grace time.Duration) {
	if grace <= 0 {
		grace = 10 * time.Second
	}
	if err := p.stop(grace); err != nil {
		t.Errorf("stopping %s: %v", p.name, err)
	}
	if t.Failed() {
		t.Logf("%s (%s) stderr, last lines:\n%s", p.name, p.cmd, p.stderr.Tail(30, 600))
		t.Logf("%s stdout, last lines:\n%s", p.name, p.stdout.Tail(3, 600))
	}
}

// stop sends SIGTERM, waits up to grace, then SIGKILL, and waits.
func (p *process) stop(grace time.Duration) error {
	if p.hasExited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-p.exited
	return fmt.Errorf("ignored SIGTERM for %s; killed", grace)
}

// kill is kill -9, waited for: a crash, as the scenario wants it.
func (p *process) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	<-p.exited
}

// signal sends sig to the process.
func (p *process) signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to %s: %v", sig, p.name, err)
	}
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitExit waits up to limit for the process to end; ok is false when it
// still runs. code is -1 when it was killed by a signal.
func (p *process) waitExit(limit time.Duration) (code int, ok bool) {
	select {
	case <-p.exited:
	case <-time.After(limit):
		return 0, false
	}
	if p.waitErr == nil {
		return 0, true
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ExitCode(), true
	}
	return -1, true
}

// freePort returns a loopback port that was free a moment ago. Callers
// that bind it in another process retry when it was taken meanwhile.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	return port
}

// closedPortURL is a loopback URL where nothing listens: a webhook or
// store that refuses connections.
func closedPortURL(t testing.TB, path string) string {
	t.Helper()
	return fmt.Sprintf("http://127.0.0.1:%d%s", freePort(t), path)
}

// eventually polls cond every `every` until it holds or limit passes; it
// returns how long that took.
func eventually(limit, every time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	deadline := start.Add(limit)
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Now().After(deadline) {
			return time.Since(start), false
		}
		time.Sleep(every)
	}
}

// secs formats a measured duration for the MEASURED lines: seconds with
// one decimal.
func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
