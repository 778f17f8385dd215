package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/ttftop/ttftop/internal/screentest"
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
	return startWith(t, fixtureStore(), fixtureAlerts(), opts, w, h)
}

// startWith runs the real program over data at w×h in the mono profile.
func startWith(t *testing.T, data Data, al Alerts, opts Options, w, h int) *teatest.TestModel {
	t.Helper()
	return teatest.NewTestModel(t, settling{Model: New(data, al, opts)},
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.NoTTY)))
}

// settling wraps the program's model so a test can wait, on the
// program's own goroutine, until every read it asked for is applied: the
// first data can ask for a second read (the rows' charts want more
// points than the first asked for), and a golden taken between the two
// would depend on timing.
type settling struct {
	Model
	waiting []chan struct{}
}

// settleMsg asks to be told (done closed) once the model is settled.
type settleMsg struct{ done chan struct{} }

func (s settling) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m, ok := msg.(settleMsg); ok {
		s.waiting = append(s.waiting, m.done)
	}
	_, cmd := s.Model.Update(msg)
	if a := s.a; a.haveData && !a.inflight && a.table.SeriesPoints() == a.sparkN {
		for _, w := range s.waiting {
			close(w)
		}
		s.waiting = nil
	}
	return s, cmd
}

// settle waits until the program has applied every read it asked for.
func settle(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	done := make(chan struct{})
	tm.Send(settleMsg{done})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not settle: a read it asked for never came back")
	}
}

func send(tm *teatest.TestModel, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

// finish quits and compares the final frame with the golden file.
func finish(t *testing.T, tm *teatest.TestModel) {
	t.Helper()
	golden.RequireEqual(t, []byte(finishFrame(t, tm)))
}

// finishFrame quits and returns the final frame, ANSI stripped.
func finishFrame(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	settle(t, tm)
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(settling)
	if !ok {
		t.Fatal("final model is not a settling tui.Model")
	}
	if _, err := io.ReadAll(tm.Output()); err != nil {
		t.Fatal(err)
	}
	return ansi.Strip(fm.View().Content)
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
	waitOut(t, tm, "TTFT p50/v") // the arrow marks p99, the figure it sorts by
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
			opts := testOptions()
			opts.Racer = newScriptedRacer() // a dashboard's help lists the race key
			tm := start(t, opts, sz[0], sz[1])
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

var fleetSizes = [][2]int{{80, 24}, {100, 30}, {120, 40}, {160, 50}, {240, 60}}

// TestGoldenFleet: 13 endpoints on 3 servers with long, similar model
// names, at every size. The goldens are what the eye checks; the test
// also checks that every row and every alert line reads apart.
func TestGoldenFleet(t *testing.T) {
	for _, sz := range fleetSizes {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, fleetStore(), fleetAlerts(), testOptions(), sz[0], sz[1])
			waitOut(t, tm, "3 firing")
			final := finishFrame(t, tm)
			assertApart(t, final)
			golden.RequireEqual(t, []byte(final))
		})
	}
}

// fleetNames are every endpoint name of fleetStore.
func fleetNames() []string {
	var out []string
	for si, srv := range fleetServers {
		models := fleetModels
		if si == 2 {
			models = []string{"meta-llama/Llama-3.2-3B-Instruct"}
		}
		for _, m := range models {
			out = append(out, srv+"/"+m)
		}
	}
	return out
}

// assertApart checks that every row and alert line of a fleet frame
// reads as one endpoint (screentest.Apart), and that enough were read.
func assertApart(t *testing.T, frame string) {
	t.Helper()
	if rows, alerts := screentest.Apart(t, frame, fleetNames()); rows < 8 || alerts < 3 {
		t.Errorf("%d rows and %d alert lines parsed, want ≥ 8 and ≥ 3:\n%s", rows, alerts, frame)
	}
}

// TestGoldenPromFleet: PromQL mode grouped by namespace and cluster (no
// probe), at the smallest and a large size: the header counts serving
// endpoints, the rows keep their group apart, the cells fit.
func TestGoldenPromFleet(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, promFleetStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "Qwen")
			golden.RequireEqual(t, []byte(finishFrame(t, tm)))
		})
	}
}

// TestGoldenPromFleetDown: one of a model's two replicas is down: the
// header counts it, the model row says "×2 ▼1", the replica listed (x)
// reads DOWN, and the line under the table says since when and why.
func TestGoldenPromFleetDown(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, promFleetDownStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "Qwen")
			send(tm, "j", "x", "j", "j")
			waitOut(t, tm, "DOWN since")
			final := finishFrame(t, tm)
			for _, want := range []string{"1 DOWN", "×2 ▼1 -", "DOWN since 12:04:00"} {
				if !strings.Contains(final, want) {
					t.Errorf("%q not on screen", want)
				}
			}
			golden.RequireEqual(t, []byte(final))
		})
	}
}

// TestPromFleetDownInProblems: the e screen lists the down target with
// since when and the store's reason, and its hint.
func TestPromFleetDownInProblems(t *testing.T) {
	tm := startWith(t, promFleetDownStore(), nil, testOptions(), 160, 50)
	waitOut(t, tm, "Qwen")
	send(tm, "e")
	final := finishFrame(t, tm)
	words := strings.Join(strings.Fields(final), " ")
	for _, want := range []string{"targets down or gone", "prod/a/10.0.0.2:8000/meta-llama/Llama-3.1-8B-Instruct DOWN since 12:04:00 (1m", "connect: connection refused", "nothing listens there"} {
		if !strings.Contains(words, want) {
			t.Errorf("%q not on the e screen:\n%s", want, final)
		}
	}
}

// TestGoldenPromFleetDetail: the detail of a PromQL model row (no probe)
// leaves out the panels only probes fill, and says why.
func TestGoldenPromFleetDetail(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}} {
		t.Run(sizeName(sz), func(t *testing.T) {
			tm := startWith(t, promFleetStore(), nil, testOptions(), sz[0], sz[1])
			waitOut(t, tm, "Qwen")
			send(tm, "enter")
			waitOut(t, tm, "(no SLO)")
			final := finishFrame(t, tm)
			for _, probeOnly := range []string{"no token counts in recent probes", "last probes newest first", "no probes yet", "no response streamed yet"} {
				if strings.Contains(final, probeOnly) {
					t.Errorf("%q shown for an endpoint without a probe", probeOnly)
				}
			}
			golden.RequireEqual(t, []byte(final))
		})
	}
}

// The TUI says what of a PromQL store's figures is backfilled history
// and what is live, where the sources are shown: the e screen and the
// detail of an endpoint it feeds (QA5 #11: only "(12m of data)").
func TestPromFleetSaysBackfilledAndLive(t *testing.T) {
	for _, keys := range [][]string{{"e"}, {"enter"}} {
		t.Run(keys[0], func(t *testing.T) {
			tm := startWith(t, promFleetStore(), nil, testOptions(), 160, 50)
			waitOut(t, tm, "Qwen")
			send(tm, keys...)
			final := finishFrame(t, tm)
			// Wrapped to the width: compare the words.
			if words := strings.Join(strings.Fields(final), " "); !strings.Contains(words, "history backfilled from 11:00:00 every 15s; live every 15s since 11:58:00") {
				t.Errorf("after %v the screen does not say what is backfilled and what live:\n%s", keys, final)
			}
		})
	}
}
