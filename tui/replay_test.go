package tui

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// fakeReplay is a scripted player: seeks move its clock.
type fakeReplay struct {
	mu          sync.Mutex
	paused      bool
	speed       float64
	clock       time.Time
	first, last time.Time
	seeks       []time.Time
	seekErr     error
}

func newFakeReplay() *fakeReplay {
	return &fakeReplay{speed: 1, clock: tNow, first: tNow.Add(-30 * time.Minute), last: tNow.Add(15 * time.Minute)}
}

func (f *fakeReplay) Pause()       { f.mu.Lock(); f.paused = true; f.mu.Unlock() }
func (f *fakeReplay) Resume()      { f.mu.Lock(); f.paused = false; f.mu.Unlock() }
func (f *fakeReplay) Paused() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.paused }
func (f *fakeReplay) SetSpeed(s float64) {
	f.mu.Lock()
	f.speed = s
	f.mu.Unlock()
}
func (f *fakeReplay) Speed() float64                  { f.mu.Lock(); defer f.mu.Unlock(); return f.speed }
func (f *fakeReplay) Bounds() (first, last time.Time) { return f.first, f.last }
func (f *fakeReplay) Cut() bool                       { return false }
func (f *fakeReplay) Clock() time.Time                { f.mu.Lock(); defer f.mu.Unlock(); return f.clock }
func (f *fakeReplay) Seek(t time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seeks = append(f.seeks, t)
	if f.seekErr != nil {
		return f.seekErr
	}
	f.clock = t
	return nil
}

func (f *fakeReplay) lastSeek() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seeks) == 0 {
		return time.Time{}
	}
	return f.seeks[len(f.seeks)-1]
}

func replayOptions(f *fakeReplay) Options {
	o := testOptions()
	o.Replay, o.Clock = f, f.Clock
	return o
}

// run runs a command's messages back through Update until none is left
// (ticks are not run: they sleep).
func run(m Model, cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		if _, ok := msg.(tickMsg); ok {
			return
		}
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				run(m, c)
			}
			return
		}
		_, cmd = m.Update(msg)
	}
}

func pressCmd(m Model, k string) tea.Cmd {
	_, cmd := m.Update(keyMsg(k))
	return cmd
}

func appLine(m Model) string { return strings.SplitN(plain(m), "\n", 2)[0] }

func TestReplayPauseAndSpeed(t *testing.T) {
	f := newFakeReplay()
	m := newSync(t, replayOptions(f), 120, 40)
	if got := appLine(m); !strings.Contains(got, "REPLAY 1× 12:05:00 30:00/45:00") || strings.Contains(got, "paused") {
		t.Fatalf("header: %q", got)
	}
	run(m, pressCmd(m, "space"))
	if !f.Paused() || !strings.Contains(appLine(m), "REPLAY 1× 12:05:00 (paused)") {
		t.Fatalf("space must pause: %v %q", f.Paused(), appLine(m))
	}
	run(m, pressCmd(m, "space"))
	if f.Paused() || strings.Contains(appLine(m), "paused") {
		t.Fatal("space again must resume")
	}
	for _, c := range []struct {
		key   string
		speed float64
		shown string
	}{{"2", 10, "REPLAY 10×"}, {"3", math.MaxFloat64, "REPLAY max"}, {"1", 1, "REPLAY 1×"}} {
		run(m, pressCmd(m, c.key))
		if f.Speed() != c.speed || !strings.Contains(appLine(m), c.shown) {
			t.Errorf("%s: speed %v, header %q", c.key, f.Speed(), appLine(m))
		}
	}
}

func TestReplayMaxSpeedOption(t *testing.T) {
	f := newFakeReplay()
	o := replayOptions(f)
	o.MaxSpeed = 1000
	m := newSync(t, o, 120, 40)
	run(m, pressCmd(m, "3"))
	if f.Speed() != 1000 || !strings.Contains(appLine(m), "REPLAY max") {
		t.Fatalf("speed %v, header %q", f.Speed(), appLine(m))
	}
}

func TestReplaySeekKeys(t *testing.T) {
	f := newFakeReplay()
	m := newSync(t, replayOptions(f), 120, 40)
	for _, c := range []struct {
		key string
		d   time.Duration
	}{
		{"right", 30 * time.Second}, {"left", -30 * time.Second},
		{"shift+right", 5 * time.Minute}, {"shift+left", -5 * time.Minute},
		{">", 5 * time.Minute}, {"<", -5 * time.Minute},
	} {
		before := f.Clock()
		run(m, pressCmd(m, c.key))
		if got := f.lastSeek(); !got.Equal(before.Add(c.d)) {
			t.Errorf("%s: sought %v, want %v", c.key, got, before.Add(c.d))
		}
		if !m.a.ctx.Now.Equal(f.Clock()) {
			t.Errorf("%s: the view must read again after a seek (shows %v, replay at %v)", c.key, m.a.ctx.Now, f.Clock())
		}
	}
	// Clamped to the recording.
	for range 4 {
		run(m, pressCmd(m, ">"))
	}
	if !f.lastSeek().Equal(f.last) || !strings.Contains(appLine(m), "45:00/45:00") {
		t.Errorf("seek past the end: %v, header %q", f.lastSeek(), appLine(m))
	}
	for range 12 {
		run(m, pressCmd(m, "<"))
	}
	if !f.lastSeek().Equal(f.first) || !strings.Contains(appLine(m), "00:00/45:00") {
		t.Errorf("seek before the start: %v, header %q", f.lastSeek(), appLine(m))
	}
}

func TestReplaySeeksCoalesce(t *testing.T) {
	f := newFakeReplay()
	m := newSync(t, replayOptions(f), 120, 40)
	first := pressCmd(m, "right")
	second, third := pressCmd(m, "right"), pressCmd(m, "right")
	if second != nil || third != nil {
		t.Fatal("keys pressed during a seek must not start more seeks")
	}
	run(m, first)
	if len(f.seeks) != 2 || !f.seeks[0].Equal(tNow.Add(30*time.Second)) || !f.seeks[1].Equal(tNow.Add(90*time.Second)) {
		t.Fatalf("seeks: %v (want the first, then where the keys ended up)", f.seeks)
	}
	if m.a.seeking {
		t.Fatal("seek still marked running")
	}
}

func TestReplaySeekErrorShown(t *testing.T) {
	f := newFakeReplay()
	f.seekErr = errors.New("record: damaged at line 42\x1b[31m")
	m := newSync(t, replayOptions(f), 120, 40)
	run(m, pressCmd(m, "right"))
	if got := appLine(m); !strings.Contains(got, "seek failed: record: damaged at line 42") {
		t.Fatalf("seek error not shown: %q", got)
	}
	if strings.Contains(m.View().Content, "\x1b[31m") {
		t.Fatal("error text must be made inert")
	}
}

func TestReplaySeekRefusedWhileFrozen(t *testing.T) {
	f := newFakeReplay()
	m := newSync(t, replayOptions(f), 120, 40)
	press(m, "p")
	if cmd := pressCmd(m, "right"); cmd != nil || len(f.seeks) != 0 {
		t.Fatal("no seek under frozen figures")
	}
	if !strings.Contains(appLine(m), "p to resume") {
		t.Fatalf("header: %q", appLine(m))
	}
	run(m, pressCmd(m, "space")) // pause still works: it only stops playback
	if !f.Paused() {
		t.Fatal("space must pause while frozen")
	}
}

func TestReplayKeysOffWithoutReplay(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	for _, k := range []string{"left", "right", "<", ">", "1", "2", "3"} {
		if cmd := pressCmd(m, k); cmd != nil {
			t.Errorf("%s must do nothing outside a replay", k)
		}
	}
	if strings.Contains(plain(m), "REPLAY") {
		t.Fatal("no REPLAY header outside a replay")
	}
	press(m, "?")
	if strings.Contains(plain(m), "pause/resume") {
		t.Fatal("help must not list the replay keys outside a replay")
	}
	// space pages down there; in a replay it pauses instead.
	if !m.a.keys.PageDown.Enabled() || !strings.Contains(strings.Join(m.a.keys.PageDown.Keys(), ","), "space") {
		t.Fatal("space pages down outside a replay")
	}
	r := newSync(t, replayOptions(newFakeReplay()), 120, 40)
	if strings.Contains(strings.Join(r.a.keys.PageDown.Keys(), ","), "space") {
		t.Fatal("space must not page down in a replay")
	}
}

func TestReplayHelpListsKeys(t *testing.T) {
	m := newSync(t, replayOptions(newFakeReplay()), 160, 60)
	press(m, "?")
	p := plain(m)
	for _, want := range []string{"pause/resume replay", "back 30s", "forward 5m", "replay at 10×", "replay at max speed"} {
		if !strings.Contains(p, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestReplayDetailFooter(t *testing.T) {
	m := newSync(t, replayOptions(newFakeReplay()), 160, 40)
	press(m, "enter")
	lines := strings.Split(plain(m), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "space pause/resume replay") {
		t.Fatalf("detail footer: %q", foot)
	}
}
