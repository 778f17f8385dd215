package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/internal/screentest"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/tui/table"
)

// rowOrder returns the endpoint names in table order, as drawn.
func rowOrder(t testing.TB, m Model) []string {
	t.Helper()
	sc, err := screentest.Parse(plain(m))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range sc.Rows() {
		out = append(out, r.Name)
	}
	return out
}

func TestSortCyclesAndReverses(t *testing.T) {
	m := newSync(t, testOptions(), 160, 40)
	if got := rowOrder(t, m); got[0] != "deepseek-r1" || got[len(got)-1] != "qwen-72b" {
		t.Fatalf("default order by name: %v", got)
	}
	press(m, "s") // SLO, worst first
	if col, desc := m.a.table.Sort(); col != table.ColSLO || desc {
		t.Fatalf("after s: %v %v", col, desc)
	}
	if got := rowOrder(t, m); got[0] != "qwen-72b" || got[1] != "gemma-9b" {
		t.Errorf("SLO order: %v", got)
	}
	press(m, "s") // TTFT p99, worst first
	if got := rowOrder(t, m); got[0] != "qwen-72b" || got[len(got)-1] != "phi-3" {
		t.Errorf("TTFT order (unknown last): %v", got)
	}
	press(m, "S")
	if got := rowOrder(t, m); got[0] != "llama-8b" || got[len(got)-1] != "phi-3" {
		t.Errorf("reversed TTFT order keeps unknown last: %v", got)
	}
	if !strings.Contains(plain(m), "TTFT p50/▲p99") {
		t.Error("sort indicator missing, or not on the p99 the column sorts by")
	}
}

func TestFilterTypingAndEsc(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	press(m, "/", "q", "w", "e", "n", "-", "7")
	if cmd := m.a.update(keyMsg("q")); cmd != nil {
		t.Fatal("q while filtering must type, not quit")
	}
	if got := m.a.table.Filter().Value(); got != "qwen-7q" {
		t.Fatalf("filter = %q", got)
	}
	press(m, "backspace")
	if c := m.a.table.Counts(); c.Endpoints != 1 || c.AllEndpoints != 7 {
		t.Fatalf("shown %d of %d", c.Endpoints, c.AllEndpoints)
	}
	if !strings.Contains(plain(m), "1 of 7 endpoints match") {
		t.Error("footer must show the filter and match count")
	}
	press(m, "enter") // keep the filter, leave the input
	if m.a.table.Filter().Editing() || !m.a.table.Filter().Active() {
		t.Fatal("enter keeps the filter")
	}
	press(m, "esc")
	if m.a.table.Filter().Active() {
		t.Fatal("esc clears the filter")
	}
	if c := m.a.table.Counts(); c.Endpoints != 7 {
		t.Fatalf("shown %d after clear", c.Endpoints)
	}
}

func TestWindowAndRefreshKeys(t *testing.T) {
	opts := testOptions()
	opts.Refresh = time.Second
	m := newSync(t, opts, 120, 40)
	press(m, "+")
	if m.a.ctx.Window != 15*time.Minute || !strings.Contains(plain(m), "window 15m") {
		t.Fatalf("window after +: %v", m.a.ctx.Window)
	}
	press(m, "+", "+", "+")
	if m.a.ctx.Window != time.Hour {
		t.Fatalf("window clamps at 1h: %v", m.a.ctx.Window)
	}
	press(m, "-", "-", "-", "-", "-")
	if m.a.ctx.Window != time.Minute {
		t.Fatalf("window clamps at 1m: %v", m.a.ctx.Window)
	}
	press(m, "[")
	if m.a.ctx.Refresh != 500*time.Millisecond || !strings.Contains(plain(m), "refresh 500ms") {
		t.Fatalf("refresh after [: %v", m.a.ctx.Refresh)
	}
	old := m.a.tickID
	press(m, "]", "]")
	if m.a.ctx.Refresh != 2*time.Second || m.a.tickID == old {
		t.Fatalf("refresh after ]]: %v (a new tick chain must start)", m.a.ctx.Refresh)
	}
	// A tick from the superseded chain does nothing.
	if cmd := m.a.update(tickMsg{id: old}); cmd != nil {
		t.Fatal("stale tick must be ignored")
	}
}

func TestFreezeIgnoresData(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	press(m, "p")
	if !m.a.frozen || !strings.Contains(plain(m), "FROZEN") {
		t.Fatal("p must freeze and say FROZEN")
	}
	if cmd := m.a.update(tickMsg{id: m.a.tickID}); cmd != nil {
		t.Fatal("no refresh while frozen")
	}
	press(m, "+")
	if m.a.ctx.Window != 5*time.Minute || !strings.Contains(plain(m), "p to resume") {
		t.Fatal("the window must not change under frozen figures")
	}
	before := plain(m)
	m.Update(dataMsg{seq: m.a.seq + 1, now: tNow.Add(time.Hour), fp: 42})
	if plain(m) != before {
		t.Fatal("data must not change a frozen screen")
	}
	press(m, "p")
	if m.a.frozen || strings.Contains(plain(m), "FROZEN") {
		t.Fatal("p again resumes")
	}
}

func TestThemeCycleAndNoColor(t *testing.T) {
	opts := testOptions()
	opts.Theme = "dark"
	m := newSync(t, opts, 120, 40)
	seen := []string{m.a.ctx.Styles.Theme.Name}
	for range 5 {
		press(m, "t")
		seen = append(seen, m.a.ctx.Styles.Theme.Name)
	}
	if strings.Join(seen, ",") != "dark,light,high-contrast,okabe-ito,mono,dark" {
		t.Errorf("theme cycle: %v", seen)
	}
	opts.Getenv = func(k string) string {
		if k == "NO_COLOR" {
			return "yes" // any non-empty value counts
		}
		return ""
	}
	m = newSync(t, opts, 120, 40)
	press(m, "t")
	if m.a.ctx.Styles.Theme.Name != "mono" || !strings.Contains(plain(m), "NO_COLOR") {
		t.Errorf("NO_COLOR must pin mono, got %s", m.a.ctx.Styles.Theme.Name)
	}
	if strings.Contains(m.View().Content, "\x1b[38;5;") {
		t.Error("NO_COLOR output must carry no colour")
	}
}

func TestEnterEscTabAndHelp(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	press(m, "down", "enter")
	if m.a.screen != screenDetail || m.a.detail.Name() != "gemma-9b" {
		t.Fatalf("enter opens the selected row: screen %v %q", m.a.screen, m.a.detail.Name())
	}
	refresh(m)
	if !strings.Contains(plain(m), "connection refused") {
		t.Error("detail must show the probe error")
	}
	press(m, "?")
	if m.a.screen != screenHelp || !strings.Contains(plain(m), "the source answered with nothing") {
		t.Fatal("? shows help with the terms on screen")
	}
	press(m, "G") // the GPU panel's terms are at the end, after the metrics
	if !strings.Contains(plain(m), "GPU panel (u shows or hides it)") {
		t.Fatal("G scrolls help to its end, the GPU panel's terms")
	}
	press(m, "esc")
	if m.a.screen != screenDetail {
		t.Fatal("esc in help returns to where it was opened")
	}
	press(m, "esc")
	if m.a.screen != screenMain || m.a.liveOn {
		t.Fatal("esc leaves detail and stops the live poll")
	}
	if n := strings.Count(plain(m), "▸"); n != 1 {
		t.Fatalf("table focused: %d cursors drawn, want 1", n)
	}
	press(m, "tab")
	if m.a.focus != paneAlerts {
		t.Fatal("tab focuses the alerts pane")
	}
	// One cursor, the alerts pane's (its title and its row carry it).
	if lines := strings.Split(plain(m), "\n"); strings.Count(strings.Join(lines[:m.a.layoutAlertsTop], "\n"), "▸") != 0 {
		t.Fatalf("alerts focused: the table still draws its cursor:\n%s", plain(m))
	}
	lines := strings.Split(plain(m), "\n")
	if footer := lines[len(lines)-1]; !strings.HasPrefix(footer, "alerts pane: ") || !strings.Contains(footer, "back to table") {
		t.Fatalf("the status line does not say the alerts pane has the keys: %q", footer)
	}
	press(m, "esc")
	if m.a.focus != paneTable {
		t.Fatal("esc leaves the alerts pane")
	}
	lines = strings.Split(plain(m), "\n")
	if footer := lines[len(lines)-1]; strings.Contains(footer, "alerts pane") {
		t.Fatalf("the table has the keys again but the status line says the alerts pane: %q", footer)
	}
	press(m, "tab")
	press(m, "enter")
	if m.a.screen != screenDetail || m.a.detail.Name() != "gemma-9b" {
		t.Fatalf("enter on an alert opens its endpoint, got %q", m.a.detail.Name())
	}
	press(m, "esc", "tab")
	if m.a.focus == paneAlerts {
		t.Fatal("tab again returns to the table")
	}
	if n := strings.Count(plain(m), "▸"); n != 1 {
		t.Fatalf("table focused again: %d cursors drawn, want 1", n)
	}
}

func TestQuitKeys(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	for _, k := range []string{"q", "ctrl+c"} {
		cmd := m.a.update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s returns no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Fatalf("%s does not quit", k)
		}
	}
}

// clickEveryTableLine clicks each line under the column header and checks
// that it selects the row drawn there or above it (a click on a chart
// selects its row); it returns how many chart lines it read.
func clickEveryTableLine(t *testing.T, m Model) (charts int) {
	t.Helper()
	sc, err := screentest.Parse(plain(m))
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for i, l := range sc.Table {
		switch l.Kind {
		case screentest.Row:
			want = l.Name
		case screentest.Chart:
			charts++
		}
		m.Update(tea.MouseClickMsg{X: 5, Y: 3 + i, Button: tea.MouseLeft})
		if r, _ := m.a.table.Selected(); r.Name() != want {
			t.Fatalf("click on table line %d selected %q, want %q:\n%s", i+1, r.Name(), want, plain(m))
		}
	}
	return charts
}

func TestMouseClickAndWheel(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	// Rows start under the 2 header lines and the column header; a click
	// on a row or on any line of its charts selects it, whatever height
	// the layout gave them.
	if charts := clickEveryTableLine(t, m); charts < 14 {
		t.Fatalf("want rows with charts at 120x40, read %d chart lines", charts)
	}
	clickEveryTableLine(t, newSync(t, testOptions(), 120, 20)) // compact rows
	m.Update(tea.MouseClickMsg{X: 5, Y: m.a.layoutAlertsTop + 2, Button: tea.MouseLeft})
	if al, _ := m.a.alertP.Selected(); m.a.focus != paneAlerts || al.Endpoint != "qwen-72b" {
		t.Fatalf("click on alert: focus %v %q", m.a.focus, al.Endpoint)
	}
	big := New(bigStore(60), nil, testOptions())
	big.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	refresh(big)
	big.Update(tea.MouseWheelMsg{X: 5, Y: 10, Button: tea.MouseWheelDown})
	if got := rowOrder(t, big)[0]; got != "ep-003" {
		t.Fatalf("wheel down scrolls 3 rows, top row %q", got)
	}
}

func TestUnchangedRefreshDoesNotRender(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	// The first refresh picked the layout (chart strips), whose series
	// have more points than the sparklines of an empty table: read again.
	refresh(m)
	_ = m.View()
	refresh(m)
	if m.a.dirty {
		t.Fatal("an identical refresh at the same second must not mark the frame dirty")
	}
	old := m.a.seq
	m.Update(dataMsg{seq: old - 1, now: tNow, fp: 1})
	if m.a.fp == 1 {
		t.Fatal("a late result must be dropped")
	}
}

func TestBellRingsOnceWhenAnAlertStartsFiring(t *testing.T) {
	opts := testOptions()
	opts.Bell = true
	fa := fixtureAlerts()
	m := New(fixtureStore(), fa, opts)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	apply := func() tea.Cmd {
		m.a.inflight = false
		return m.a.update(m.a.fetch()())
	}
	if rings(apply()) {
		t.Fatal("alerts already firing at start must not ring")
	}
	fa.list[1].State = slo.Firing // deepseek-r1 pending → firing
	if !rings(apply()) {
		t.Fatal("a new firing alert must ring")
	}
	fa.list[1].Value += 0.01 // still firing, data changed
	if rings(apply()) {
		t.Fatal("an alert that keeps firing rings once")
	}
}

func TestLiveReadsBetweenRefreshes(t *testing.T) {
	for _, c := range []struct {
		refresh time.Duration
		fps     int
		iv      time.Duration
		n       int
	}{
		{250 * time.Millisecond, 20, 250 * time.Millisecond, 1},
		{500 * time.Millisecond, 20, 250 * time.Millisecond, 2},
		{time.Second, 20, 200 * time.Millisecond, 5},
		{2 * time.Second, 60, 200 * time.Millisecond, 10},
		{time.Second, 2, 500 * time.Millisecond, 2},
	} {
		o := testOptions()
		o.Refresh, o.FPS = c.refresh, c.fps
		m := newSync(t, o, 120, 40)
		if iv, n := m.a.liveInterval(); iv != c.iv || n != c.n {
			t.Errorf("refresh %v fps %d: every %v, %d steps; want %v, %d", c.refresh, c.fps, iv, n, c.iv, c.n)
		}
	}
	o := testOptions()
	o.Refresh = time.Second
	m := newSync(t, o, 120, 40)
	press(m, "enter")
	refresh(m) // a refresh restarts the reads, phase-locked to it
	for i := range 4 {
		id := m.a.liveID
		cmd := m.a.update(liveTickMsg{id})
		if m.a.liveID != id {
			t.Fatalf("tick %d: must read, not wait", i)
		}
		if _, ok := cmd().(liveMsg); !ok {
			t.Fatalf("tick %d: no live read", i)
		}
	}
	id := m.a.liveID
	m.a.update(liveTickMsg{id})
	if m.a.liveID == id {
		t.Fatal("the refresh's own slot must not read the live text")
	}
	// The refresh is late: reads go on.
	id = m.a.liveID
	if _, ok := m.a.update(liveTickMsg{id})().(liveMsg); !ok {
		t.Fatal("reads must go on when a refresh is late")
	}
}

// e shows every failing source and figure in full with a hint; m turns
// mouse capture off so the text can be copied; esc goes back.
func TestProblemsScreenAndMouseCapture(t *testing.T) {
	m := newSync(t, testOptions(), 100, 40)
	press(m, "e")
	out := plain(m)
	if m.a.screen != screenProblems || !strings.Contains(out, "connect: connection refused") ||
		!strings.Contains(out, "hint: nothing listens there") {
		t.Fatalf("problems screen:\n%s", out)
	}
	if v := m.a.view(); v.MouseMode != tea.MouseModeCellMotion {
		t.Fatalf("mouse mode %v before m", v.MouseMode)
	}
	press(m, "m")
	if v := m.a.view(); v.MouseMode != tea.MouseModeNone {
		t.Errorf("m must turn mouse capture off, mode %v", v.MouseMode)
	}
	press(m, "esc")
	if m.a.screen != screenMain {
		t.Errorf("esc: screen %v", m.a.screen)
	}
}

// Help over the problems screen (or the other way round): esc twice is
// back where it started, never stuck between the two.
func TestOverlaysReturnWhereOpened(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	press(m, "e", "?", "esc")
	if m.a.screen != screenMain {
		t.Fatalf("e ? esc: screen %v, want main", m.a.screen)
	}
	press(m, "e", "esc")
	if m.a.screen != screenMain {
		t.Fatalf("e esc: screen %v", m.a.screen)
	}
}
