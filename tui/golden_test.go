package tui

import (
	"bytes"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// Goldens run the real program (teatest) over a scripted telemetry.Store
// with a fixed clock and the mono theme, then compare the final frame
// with ANSI stripped. Update with: go test ./tui/... -update

var sizes = [][2]int{{120, 40}, {80, 24}}

func sizeName(s [2]int) string { return itoa(s[0]) + "x" + itoa(s[1]) }

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// waitOut waits until the program has drawn s.
func waitOut(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

func start(t *testing.T, opts Options, w, h int) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, New(fixtureStore(), fixtureAlerts(), opts),
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.NoTTY)))
	return tm
}

func send(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

// finish quits and compares the final frame with the golden file.
func finish(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
	if !ok {
		t.Fatal("final model is not a tui.Model")
	}
	if _, err := io.ReadAll(tm.Output()); err != nil {
		t.Fatal(err)
	}
	golden.RequireEqual(t, []byte(ansi.Strip(fm.View().Content)))
}

func TestGoldenMain(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := start(t, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "qwen-72b")
			finish(t, tm)
		})
	}
}

func TestGoldenMainASCII(t *testing.T) {
	opts := testOptions()
	opts.ASCII = true
	tm := start(t, opts, 120, 40)
	waitOut(t, tm, "qwen-72b")
	// Sort by TTFT p99, worst first.
	send(tm, "s", "s")
	waitOut(t, tm, "TTFT p50/p99v")
	finish(t, tm)
}

func TestGoldenDetail(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := start(t, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "qwen-72b")
			send(tm, "/", "8", "b", "enter", "enter")
			// The SLO line is drawn once the detail read is back.
			waitOut(t, tm, "SLO 500ms")
			finish(t, tm)
		})
	}
}

func TestGoldenHelp(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := start(t, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "qwen-72b")
			send(tm, "?")
			waitOut(t, tm, "reverse sort")
			finish(t, tm)
		})
	}
}

func TestGoldenAlerts(t *testing.T) {
	tm := start(t, testOptions(), 120, 40)
	waitOut(t, tm, "qwen-72b")
	send(tm, "tab", "down")
	finish(t, tm)
}

func TestGoldenTooSmall(t *testing.T) {
	tm := start(t, testOptions(), 30, 8)
	waitOut(t, tm, "too small")
	finish(t, tm)
}

func TestGoldenReplay(t *testing.T) {
	f := newFakeReplay()
	f.speed, f.paused = 10, true
	tm := start(t, replayOptions(f), 120, 40)
	waitOut(t, tm, "qwen-72b")
	finish(t, tm)
}
