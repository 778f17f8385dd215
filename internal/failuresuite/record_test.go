//go:build integration

package failuresuite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// recordFor is how much a recording holds before its recorder is cut off.
const recordFor = 14 * time.Second

// lostAtMost is what an interrupted recording may lose at its end: the
// last flush interval (1 s) and the gap to the last observation before it.
const lostAtMost = 2 * time.Second

// TestRecordingSurvivesSIGHUP is Proof 6: a headless dashboard recording
// to a .gz file loses its terminal (SIGHUP, as when the SSH session
// drops) → it exits within 10 s with the gzip stream finished, and
// `replay FILE` (headless) and `replay FILE --json --at 10s` work, up to
// the last second before the signal. The same after kill -9, where only
// the last second may be lost and replay says where it stopped.
func TestRecordingSurvivesSIGHUP(t *testing.T) {
	t.Parallel()
	sim := startSim(t, "127.0.0.1:0", "--model", "rec-m:1b", "--load", "1")
	endpoint := sim.addr + "/rec-m"
	for _, c := range []struct {
		name string
		sig  syscall.Signal
	}{{"sighup", syscall.SIGHUP}, {"kill-9", syscall.SIGKILL}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "session.jsonl.gz")
			rec := startHeadless(t, "recorder", sim.url, "--interval", "1s", "--record", path)
			var got recordingRead
			if _, ok := eventually(90*time.Second, time.Second, func() bool {
				r, err := readRecording(path)
				if err != nil {
					return false
				}
				got = r
				first, last := r.span()
				return !first.IsZero() && last.Sub(first) >= recordFor
			}); !ok {
				first, last := got.span()
				t.Fatalf("the recording never held %s (it spans %s to %s, %d lines)", recordFor, first, last, len(got.lines))
			}
			sentAt := time.Now()
			rec.signal(t, c.sig)
			code, exited := rec.waitExit(10 * time.Second)
			if !exited {
				t.Fatalf("the recorder still runs 10 s after %s", c.name)
			}
			exitedAfter := time.Since(sentAt)

			r, err := readRecording(path)
			if err != nil {
				t.Fatal(err)
			}
			first, last := r.span()
			if c.sig == syscall.SIGHUP && !r.complete {
				t.Errorf("after SIGHUP the recording is unfinished (%v): it was not flushed and closed", r.endErr)
			}
			if lost := sentAt.Sub(last); lost > lostAtMost {
				t.Errorf("the recording's last line is %s before the %s: more than %s lost", secs(lost), c.name, lostAtMost)
			}
			t.Logf("recorder exit code %d after %s; recording %s long, %d lines, complete %v (%v)",
				code, secs(exitedAfter), secs(last.Sub(first)), len(r.lines), r.complete, r.endErr)

			at10 := replayAt(t, path, "10s")
			checkReplayed(t, at10, endpoint, first.Add(10*time.Second))
			lastSecond := last.Sub(first).Truncate(time.Second) - time.Second
			atEnd := replayAt(t, path, lastSecond.String())
			checkReplayed(t, atEnd, endpoint, first.Add(lastSecond))
			if c.sig == syscall.SIGKILL && at10.stderr == "" && !r.complete {
				t.Errorf("replay --json of a cut recording did not say on stderr where it stopped")
			}
			reached := replayHeadless(t, path, first.Add(lastSecond))
			measured(t, "record-"+c.name, map[string]time.Duration{
				"exited_after": exitedAfter, "lost_at_end": sentAt.Sub(last), "replayed_to": reached.Sub(first),
			}, "exited_after", "lost_at_end", "replayed_to")
		})
	}
}

// replayOut is what one `replay --json` printed.
type replayOut struct {
	code   int
	doc    snapshotDoc
	stdout string
	stderr string
}

// replayAt runs `ttftop replay FILE --json --at AT` and parses its one
// JSON document.
func replayAt(t *testing.T, path, at string) replayOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ttftopBinary(t), "replay", path, "--json", "--at", at)
	cmd.Env = append(os.Environ(), isolatedEnv(t)...)
	var stdout, stderr lineLog
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := replayOut{stdout: stdout.Text(), stderr: stderr.Text()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		out.code = ee.ExitCode()
	default:
		t.Fatalf("replay --json --at %s: %v", at, err)
	}
	if out.code != 0 {
		t.Fatalf("replay --json --at %s exited %d; stderr:\n%s", at, out.code, out.stderr)
	}
	if err := json.Unmarshal([]byte(out.stdout), &out.doc); err != nil {
		t.Fatalf("replay --json --at %s: stdout is not one JSON document (%v):\n%.2000s\nstderr:\n%s", at, err, out.stdout, out.stderr)
	}
	return out
}

// checkReplayed asserts a replayed document is at want (±1 s) and shows
// the endpoint with a TTFT figure.
func checkReplayed(t *testing.T, out replayOut, endpoint string, want time.Time) {
	t.Helper()
	if d := out.doc.At.Sub(want); d < -time.Second || d > time.Second {
		t.Errorf("replayed document is at %s, want %s", out.doc.At.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	ep, ok := endpointOf(out.doc, endpoint)
	if !ok {
		t.Errorf("replayed document at %s lacks %s:\n%.2000s", out.doc.At.Format(time.RFC3339), endpoint, out.stdout)
		return
	}
	if f, ok := anyFigure(ep, sigTTFT); !ok || !f.hasNumber() {
		t.Errorf("replayed document at %s: %s has no TTFT figure (%+v)", out.doc.At.Format(time.RFC3339), endpoint, f)
	}
}

// summaryTime is the time that starts each headless text summary
// ("2026-12-01T11:05:24Z  window 5m0s").
var summaryTime = regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))\s`)

// replayHeadless runs `ttftop replay FILE --speed max` with stdout a
// pipe (text summaries at the replay's clock) until a summary is at or
// past want, then interrupts it; it must exit 0. It returns the latest
// summary time.
func replayHeadless(t *testing.T, path string, want time.Time) time.Time {
	t.Helper()
	p := startProcess(t, "replay", procOptions{env: isolatedEnv(t)}, ttftopBinary(t), "replay", path, "--speed", "max")
	var latest time.Time
	eventually(60*time.Second, 200*time.Millisecond, func() bool {
		for _, m := range summaryTime.FindAllStringSubmatch(p.stdout.Text(), -1) {
			if ts, err := time.Parse(time.RFC3339Nano, m[1]); err == nil && ts.After(latest) {
				latest = ts
			}
		}
		return !latest.Before(want.Truncate(time.Second)) || p.hasExited()
	})
	if !p.hasExited() {
		p.signal(t, syscall.SIGINT)
	}
	code, ok := p.waitExit(10 * time.Second)
	switch {
	case !ok:
		t.Errorf("replay did not exit within 10 s of SIGINT")
	case code != 0:
		t.Errorf("headless replay exited %d; stderr:\n%s", code, p.stderr.Text())
	}
	if latest.Before(want.Truncate(time.Second)) {
		t.Errorf("headless replay reached %s, not %s; stdout:\n%s", latest.Format(time.RFC3339), want.Format(time.RFC3339), p.stdout.Tail(20, 300))
	}
	return latest
}
