package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/sweep"
)

func fp(v float64) *float64 { return &v }

// On a terminal the live table is redrawn in place: each drawing first
// moves back over the previous one and clears it; at the end it is wiped,
// as the final table goes to stdout.
func TestSweepViewRedrawsInPlace(t *testing.T) {
	var b bytes.Buffer
	v := newSweepView(&b, true, sweep.Lines{TPOTms: fp(10)})
	one := sweep.Step{Concurrency: 1, Requests: 5, TTFTp95ms: fp(12), TPOTp95ms: fp(7)}
	v.update(sweep.Progress{Current: &one})
	first := b.String()
	if strings.Contains(first, "\x1b[") || strings.Count(first, "\n") != 2 || !strings.Contains(first, "…") {
		t.Fatalf("first drawing %q: want a header and the running step, no cursor moves", first)
	}
	b.Reset()
	one.End = "stable"
	v.update(sweep.Progress{Steps: []sweep.Step{one}})
	if got := b.String(); !strings.HasPrefix(got, "\x1b[2A\x1b[J") || strings.Contains(got, "…") {
		t.Errorf("redraw %q: want a move up over 2 lines, a clear, and the finished step", got)
	}
	b.Reset()
	if err := v.finish(); err != nil || b.String() != "\x1b[2A\x1b[J" {
		t.Errorf("finish wrote %q (%v)", b.String(), err)
	}
}

// Elsewhere (a log, CI) it prints one line per update, never escapes.
func TestSweepViewLogsLines(t *testing.T) {
	var b bytes.Buffer
	v := newSweepView(&b, false, sweep.Lines{})
	s := sweep.Step{Concurrency: 4, Requests: 9, TTFTp95ms: fp(12), TPOTp95ms: fp(7), OutputTPS: fp(500), AchievedConcurrency: fp(3.1)}
	v.update(sweep.Progress{Current: &s})
	s.End = "stable"
	v.update(sweep.Progress{Steps: []sweep.Step{s}})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || strings.Contains(b.String(), "\x1b") ||
		!strings.HasPrefix(lines[0], "ttftop sweep: concurrency 4: 9 requests (0 failed), 3.1! in flight, TTFT p95 12.0ms") ||
		!strings.HasSuffix(lines[0], "(measuring, 0.0s)") || !strings.Contains(lines[1], "(stable, 0.0s)") {
		t.Errorf("log:\n%s", b.String())
	}
}

// Sweep with no target on an empty machine is a usage error too; that is
// TestNothingFoundSaysWhatWasLooked's findOne case, since here the shared
// machine's other tests' simulators would be found.
func TestSweepUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"sweep", "http://a", "http://b"},
		{"sweep", "http://a", "--keda-max-replicas", "0"},
		{"sweep", "http://a", "--keda-window", "often"},
		{"sweep", "http://a", "--no-such-flag"},
	} {
		if code, _, errs := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errs)
		}
	}
}
