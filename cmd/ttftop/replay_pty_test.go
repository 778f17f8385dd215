//go:build integration

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/ttftop/ttftop/record"
)

// QA: `replay` of a damaged recording on the dashboard said "recording
// stops at line …" twice on stderr (before the dashboard, whose screen
// gives it back on exit, and again after). The real binary on a pty,
// stderr apart, quit with q: the notice is said once.
func TestReplayDashboardSaysDamageOnce(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting
	if testing.Short() {
		t.Skip("builds the binary and runs its dashboard on a pty")
	}
	dir := t.TempDir()
	bin := buildTtftop(t)
	// A version-1 recording (no closing record) cut inside its last line.
	path := filepath.Join(dir, "cut.jsonl")
	at := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	fmt.Fprintf(&b, "{\"kind\":\"header\",\"at\":%q,\"format\":\"ttftop-recording\",\"version\":1}\n", at.Format(time.RFC3339Nano))
	b.WriteString("{\"kind\":\"checkpoint\",\"at\":\"0001-01-01T00:00:00Z\",\"line\":2}\n")
	fmt.Fprintf(&b, "{\"kind\":\"checkpoint\",\"at\":%q,\"seq\":1,\"line\":3}\n", at.Format(time.RFC3339Nano))
	for i := range 20 {
		fmt.Fprintf(&b, "{\"kind\":\"sample\",\"at\":%q,\"endpoint\":\"e\",\"signal\":\"ttft\",\"source\":\"probe:x\",\"value\":0.5,\"interval\":1000000000}\n",
			at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano))
	}
	b.WriteString(`{"kind":"sam`)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer func() { _ = ptmx.Close() }()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd := exec.Command(bin, "replay", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, &stderr
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = tty.Close() // the child holds its own
	// Quit once the dashboard has drawn its header (REPLAY).
	screen := make(chan struct{})
	go func() {
		drawn := screen
		var seen strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			seen.Write(buf[:n])
			if drawn != nil && strings.Contains(seen.String(), "REPLAY") {
				close(drawn)
				drawn = nil
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-screen:
	case err := <-exited:
		t.Fatalf("replay exited before drawing: %v\nstderr %s", err, stderr.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("no dashboard drawn in 30 s; stderr %s", stderr.String())
	}
	if _, err := io.WriteString(ptmx, "q"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("replay: %v\nstderr %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("replay did not quit on q; stderr %s", stderr.String())
	}
	if n := strings.Count(stderr.String(), "recording stops at line"); n != 1 {
		t.Errorf("the damage said %d times, want once; stderr:\n%s", n, stderr.String())
	}
}

// The playback reaching the damaged line names the damage already said:
// it is not said again, on the dashboard or off it; other damage is.
func TestDamageToSayAfter(t *testing.T) {
	recorded := &record.DamageError{Line: 24, Err: io.ErrUnexpectedEOF}
	sameLine := &record.DamageError{Line: 24, Replayed: 20, Err: io.ErrUnexpectedEOF}
	otherLine := &record.DamageError{Line: 30, Err: io.ErrUnexpectedEOF}
	for _, c := range []struct {
		name      string
		damage    error
		playback  error
		dashboard bool
		want      int
	}{
		{"dashboard, quit before the damage", recorded, context.Canceled, true, 1},
		{"dashboard, played to the damage", recorded, sameLine, true, 1},
		{"streamed, said before", recorded, sameLine, false, 0},
		{"streamed, new damage in playback", recorded, otherLine, false, 1},
		{"dashboard, damage found only in playback", nil, otherLine, true, 1},
		{"undamaged", nil, nil, true, 0},
	} {
		if got := damageToSayAfter(c.damage, c.playback, c.dashboard); len(got) != c.want {
			t.Errorf("%s: says %v, want %d notices", c.name, got, c.want)
		}
	}
}
