//go:build integration

package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
)

// replayOut is what the tests read of `replay --json`.
type replayOut struct {
	At         time.Time `json:"at"`
	Judged     string    `json:"judged"`
	Objectives []map[string]any
	Endpoints  []struct{ Name string }
	Alerts     []slo.Alert `json:"alerts"`
	History    []slo.Alert `json:"alert_history"`
}

// TestRecordingSurvivesTheSessionEnding runs the built binary with
// --record and ends it as a session ends: SIGHUP (the SSH session or the
// terminal went away), kill -9, a tmux pane closed under the dashboard.
// The recording replays, `--json --at` included, with its alerts; outside
// it, replay exits 2. A recording made with non-default objectives replays
// with them, and the alert states at any time are those live recorded.
func TestRecordingSurvivesTheSessionEnding(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting
	if testing.Short() {
		t.Skip("builds the binary and runs it for several seconds")
	}
	bin := buildTtftop(t)
	replay := func(t *testing.T, args ...string) (int, replayOut, string) {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, append([]string{"replay"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		var doc replayOut
		if cmd.ProcessState.ExitCode() == 0 {
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("replay %q: %v\n%s", args, err, out.Bytes())
			}
		}
		return cmd.ProcessState.ExitCode(), doc, errb.String()
	}

	t.Run("SIGHUP", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "hup.jsonl.gz")
		cmd := startRecording(t, bin, rec, "demo", "--record", rec)
		waitRecorded(t, rec, 3*time.Second)
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, 10*time.Second)
		if err := gzipComplete(rec); err != nil {
			t.Fatalf("after SIGHUP the recording was not closed: %v", err)
		}
		code, doc, stderr := replay(t, rec, "--json", "--at", "2s")
		if code != 0 || stderr != "" {
			t.Fatalf("replay --json --at 2s: exit %d, stderr %q", code, stderr)
		}
		if doc.Judged != "as recorded" || len(doc.Endpoints) != len(sim.DemoConfig().Models) || len(doc.Alerts) == 0 {
			t.Errorf("replay at 2s: judged %q, %d endpoints, %d alerts", doc.Judged, len(doc.Endpoints), len(doc.Alerts))
		}
		t.Run("outside", func(t *testing.T) {
			for _, at := range []string{"1h", "2000-01-01T00:00:00Z", "-1s"} {
				code, _, stderr := replay(t, rec, "--json", "--at", at)
				if code != 2 || !strings.Contains(stderr, "is outside the recording, which starts at") {
					t.Errorf("--at %s: exit %d, stderr %q", at, code, stderr)
				}
			}
		})
	})

	t.Run("kill-9", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "killed.jsonl.gz")
		cmd := startRecording(t, bin, rec, "demo", "--record", rec)
		waitRecorded(t, rec, 3*time.Second)
		_, flushed, _ := record.Bounds(rec) // what the file held just before the kill
		killed := time.Now()
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, 10*time.Second)
		if gzipComplete(rec) == nil {
			t.Fatal("the recording of a killed process is complete: the test proves nothing")
		}
		code, end, stderr := replay(t, rec, "--json")
		if code != 0 || !strings.Contains(stderr, "recording stops at line") || !strings.Contains(stderr, "everything before is intact") {
			t.Fatalf("replay --json of the killed recording: exit %d, stderr %q", code, stderr)
		}
		// Nothing written before the kill is lost; the writer flushes every
		// second, so about that is missing (plus scheduling slack on a busy
		// machine, where a flush can wake late).
		if end.At.Before(flushed) {
			t.Errorf("the replay ends at %s, before the %s the file held just before the kill", end.At, flushed)
		}
		if lost := killed.Sub(end.At); lost > 2*time.Second {
			t.Errorf("the recording ends %v before the kill", lost)
		}
		code, doc, stderr := replay(t, rec, "--json", "--at", "2s")
		if code != 0 || len(doc.Endpoints) != len(sim.DemoConfig().Models) || len(doc.Alerts) == 0 || !strings.Contains(stderr, "recording stops at line") {
			t.Errorf("replay --json --at 2s: exit %d, %d endpoints, %d alerts, stderr %q", code, len(doc.Endpoints), len(doc.Alerts), stderr)
		}
		code, _, stderr = replay(t, rec, "--json", "--at", "1h")
		if code != 2 || !strings.Contains(stderr, "is readable up to") {
			t.Errorf("--at past the readable part: exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("kill-9-line-boundary", func(t *testing.T) {
		// A plain recording killed between two lines has no half line to
		// show it was cut: the missing closing record must.
		rec := filepath.Join(t.TempDir(), "killed.jsonl")
		cmd := startRecording(t, bin, rec, "demo", "--record", rec)
		waitRecorded(t, rec, 3*time.Second)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, 10*time.Second)
		raw, err := os.ReadFile(rec)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.LastIndexByte(raw, '\n'); i+1 != len(raw) {
			// The kill fell inside a write: cut at the line before.
			if err := os.WriteFile(rec, raw[:i+1], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, _, stderr := replay(t, rec, "--json")
		if code != 0 || !strings.Contains(stderr, "without its closing record (the recorder was killed or crashed); replayed") {
			t.Fatalf("replay --json of a recording killed on a line boundary: exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("objectives", func(t *testing.T) {
		url := startSim(t, model(sim.DemoHealthy))
		rec := filepath.Join(t.TempDir(), "slo.jsonl.gz")
		// Every TTFT breaks 1 ms: pending at once, firing 3 s later.
		cmd := startRecording(t, bin, rec, url, "--slo-ttft", "1ms", "--slo-for", "3s", "--interval", "1s",
			"--window", "1m", "--refresh", "1s", "--record", rec)
		waitFor(t, "the alert to fire", func() bool {
			if _, err := os.Stat(rec); err != nil {
				return false // not created yet
			}
			return slices.ContainsFunc(transitionsOf(t, rec), func(tr slo.Transition) bool { return tr.To == slo.Firing })
		})
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, 10*time.Second)
		trs := transitionsOf(t, rec)
		t.Logf("%d transitions recorded", len(trs))
		// Just before and at every transition, and at the end.
		var ats []time.Time
		for _, tr := range trs {
			ats = append(ats, tr.At.Add(-time.Millisecond), tr.At)
		}
		_, last, err := record.Bounds(rec)
		if err != nil {
			t.Fatal(err)
		}
		ats = append(ats, last)
		for _, at := range ats {
			code, doc, stderr := replay(t, rec, "--json", "--at", at.Format(time.RFC3339Nano))
			if code != 0 {
				t.Fatalf("--at %s: exit %d: %s", at, code, stderr)
			}
			if doc.Judged != "as recorded" || len(doc.Objectives) == 0 || doc.Objectives[0]["threshold_ms"] != 1.0 {
				t.Fatalf("--at %s: judged %q with %+v, not the recorded 1 ms objective", at, doc.Judged, doc.Objectives)
			}
			want := map[string]slo.State{}
			for _, tr := range trs {
				if !tr.At.After(at) {
					want[alertName(tr.Alert)] = tr.To
				}
			}
			got := map[string]slo.State{}
			for _, a := range doc.Alerts {
				got[alertName(a)] = a.State
			}
			for k, st := range want {
				if got[k] != st {
					t.Errorf("--at %s: %s is %q, live recorded %q", at.Format(time.RFC3339Nano), k, got[k], st)
				}
			}
			for k, st := range got {
				if _, ok := want[k]; !ok && st != slo.Inactive {
					t.Errorf("--at %s: %s is %q, live recorded no transition (inactive)", at.Format(time.RFC3339Nano), k, st)
				}
			}
		}
	})

	t.Run("stdout-closed", func(t *testing.T) {
		// Headless output to an SSH session that dropped: writes to
		// stdout fail. The run must end as for SIGHUP, not die of SIGPIPE.
		rec := filepath.Join(t.TempDir(), "pipe.jsonl.gz")
		cmd := exec.Command(bin, "demo", "--record", rec, "--refresh", "500ms")
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitRecorded(t, rec, 2*time.Second)
		if err := stdout.Close(); err != nil {
			t.Fatal(err)
		}
		waitExit(t, cmd, 10*time.Second)
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("killed by %v", ws.Signal())
		}
		if err := gzipComplete(rec); err != nil {
			t.Fatalf("after stdout closed the recording was not closed: %v", err)
		}
	})

	t.Run("tmux-closed", func(t *testing.T) {
		tmux, err := exec.LookPath("tmux")
		if err != nil {
			t.Skip("tmux not installed")
		}
		d := t.TempDir()
		rec, pidFile, sock := filepath.Join(d, "tty.jsonl.gz"), filepath.Join(d, "pid"), filepath.Join(d, "tmux.sock")
		tm := func(args ...string) error {
			return exec.Command(tmux, append([]string{"-S", sock}, args...)...).Run()
		}
		// sh execs the dashboard in the pane after writing its pid.
		script := fmt.Sprintf("echo $$ > %s; exec env TERM=xterm-256color XDG_CONFIG_HOME=%s %s demo --record %s", pidFile, d, bin, rec)
		if err := tm("new-session", "-d", "-s", "rec", "-x", "160", "-y", "50", "sh", "-c", script); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tm("kill-server") })
		waitRecorded(t, rec, 3*time.Second)
		raw, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscan(string(raw), &pid); err != nil {
			t.Fatal(err)
		}
		if err := tm("kill-server"); err != nil { // the terminal goes away: SIGHUP
			t.Fatal(err)
		}
		waitFor(t, "the dashboard to exit", func() bool { return syscall.Kill(pid, 0) != nil })
		if err := gzipComplete(rec); err != nil {
			t.Fatalf("after its terminal closed the recording was not closed: %v", err)
		}
		if code, doc, stderr := replay(t, rec, "--json", "--at", "2s"); code != 0 || len(doc.Alerts) == 0 {
			t.Errorf("replay: exit %d, %d alerts, stderr %q", code, len(doc.Alerts), stderr)
		}
	})
}

// startRecording starts the binary headless (stdout a file, not a
// terminal), killed at cleanup if still running.
func startRecording(t *testing.T, bin, rec string, args ...string) *exec.Cmd {
	t.Helper()
	out, err := os.Create(rec + ".out")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// waitRecorded waits until the recording holds span of observations.
func waitRecorded(t *testing.T, rec string, span time.Duration) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s of recording", span), func() bool {
		first, last, _ := record.Bounds(rec)
		return !first.IsZero() && last.Sub(first) >= span
	})
}

func waitExit(t *testing.T, cmd *exec.Cmd, limit time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %s", cmd.Path, limit)
	}
}

// gzipComplete reads a gzip file to its end: nil when its writer closed it.
func gzipComplete(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, zr)
	return err
}

// transitionsOf reads the alert transitions recorded so far.
func transitionsOf(t *testing.T, rec string) []slo.Transition {
	t.Helper()
	r, err := record.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	var out []slo.Transition
	for {
		e, err := r.NextEntry()
		if err != nil {
			return out // the end, or where a live recording stops for now
		}
		if e.Observation.Kind != record.KindAlert {
			continue
		}
		var tr slo.Transition
		if err := json.Unmarshal(e.Alert, &tr); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr)
	}
}

func alertName(a slo.Alert) string { return a.Objective + " " + a.Endpoint + " " + a.Severity }
