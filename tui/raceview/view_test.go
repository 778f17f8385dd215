package raceview

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// clock is a settable time for the view's elapsed figures.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newView(t *testing.T, w, h int, again func()) (*Model, *clock) {
	t.Helper()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	m := New(Options{Lanes: []Lane{{Label: "A", Name: "fast-model"}, {Label: "B", Name: "slow-model"}}, Title: "test", Again: again, Now: c.now})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m, c
}

func plainRows(m *Model) []string { return strings.Split(ansi.Strip(m.render()), "\n") }

func screen(m *Model) string { return ansi.Strip(m.render()) }

// Each chunk is on screen as soon as it arrived and nothing more: the
// text grows with the chunks, never ahead of them.
func TestTextAppearsChunkByChunk(t *testing.T) {
	for _, size := range [][2]int{{160, 50}, {80, 24}} {
		m, c := newView(t, size[0], size[1], nil)
		m.Update(Started{Round: 1})
		words := []string{"alpha ", "bravo ", "charlie ", "delta "}
		for i, w := range words {
			c.t = c.t.Add(20 * time.Millisecond)
			m.Update(Chunk{Racer: 0, Text: w, At: time.Duration(i+1) * 20 * time.Millisecond, TTFT: 20 * time.Millisecond, Tokens: i + 1})
			s := screen(m)
			want := strings.Join(words[:i+1], "")
			if !strings.Contains(s, strings.TrimSpace(want)) {
				t.Fatalf("%v after chunk %d: %q not on screen:\n%s", size, i, want, s)
			}
			if i+1 < len(words) && strings.Contains(s, strings.TrimSpace(words[i+1])) {
				t.Fatalf("%v: chunk %d drawn before it arrived", size, i+1)
			}
		}
	}
}

// Reasoning is dimmed, the answer is not, and a tool call is marked.
func TestPartsAreToldApart(t *testing.T) {
	m, _ := newView(t, 160, 50, nil)
	m.Update(Started{Round: 1})
	m.Update(Chunk{Racer: 0, Text: "thinking", Part: Reasoning, Tokens: 1})
	m.Update(Chunk{Racer: 0, Text: " answer", Part: Answer, Tokens: 2})
	m.Update(Chunk{Racer: 0, Text: `{"city":"Oslo"}`, Part: Tool, Tokens: 3})
	frame := m.render()
	if !strings.Contains(frame, faintOn+"thinking"+faintOff) {
		t.Errorf("reasoning not dimmed:\n%q", frame)
	}
	if strings.Contains(frame, faintOn+" answer") || !strings.Contains(frame, faintOff+" answer") {
		t.Errorf("answer not in the normal colour:\n%q", frame)
	}
	if !strings.Contains(frame, toolOn+toolMark+`{"city":"Oslo"}`+toolOff) {
		t.Errorf("tool call not marked:\n%q", frame)
	}
}

// Two racers side by side at 160 columns; one above the other at 80.
func TestColumnsOrBands(t *testing.T) {
	wide, _ := newView(t, 160, 50, nil)
	rows := plainRows(wide)
	if !strings.Contains(rows[2], "fast-model") || !strings.Contains(rows[2], "slow-model") {
		t.Errorf("160 columns: lanes not side by side:\n%s", strings.Join(rows, "\n"))
	}
	narrow, _ := newView(t, 80, 24, nil)
	rows = plainRows(narrow)
	a, b := -1, -1
	for i, r := range rows {
		if strings.Contains(r, "fast-model") {
			a = i
		}
		if strings.Contains(r, "slow-model") {
			b = i
		}
	}
	if a < 0 || b <= a+3 {
		t.Errorf("80 columns: want bands (B's title below A's text), rows %d and %d:\n%s", a, b, strings.Join(rows, "\n"))
	}
	for _, m := range []*Model{wide, narrow} {
		if got := len(plainRows(m)); got != m.height {
			t.Errorf("%dx%d: %d rows", m.width, m.height, got)
		}
		for i, r := range plainRows(m) {
			if w := ansi.StringWidth(r); w > m.width {
				t.Errorf("%dx%d row %d is %d cells wide", m.width, m.height, i, w)
			}
		}
	}
}

// The live figures: elapsed, the TTFT mark only once the first token
// landed, tokens so far, tok/s over the last second, TPOT so far.
func TestLiveFigures(t *testing.T) {
	m, c := newView(t, 160, 50, nil)
	m.Update(Started{Round: 1})
	c.t = c.t.Add(100 * time.Millisecond)
	m.Update(tick{})
	if s := screen(m); !strings.Contains(s, "0.1s  TTFT … waiting for the first token") {
		t.Fatalf("before the first token:\n%s", s)
	}
	// First token at 200 ms, then one every 10 ms up to 41 tokens at 600 ms.
	for k := range 41 {
		at := 200*time.Millisecond + time.Duration(k)*10*time.Millisecond
		m.Update(Chunk{Racer: 0, Text: "x", At: at, TTFT: 200 * time.Millisecond, Tokens: k + 1})
	}
	c.t = c.t.Add(500 * time.Millisecond) // 600 ms since the start
	m.Update(tick{})
	s := screen(m)
	// TPOT so far: (600 − 200) ms / 40 = 10 ms; tok/s now: 40 tokens after
	// the first in the 400 ms since it = 100/s.
	for _, want := range []string{"0.6s", "TTFT 200ms ●", "41 tok", "100 tok/s now", "TPOT 10ms"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
	c.t = c.t.Add(1500 * time.Millisecond) // a stall: nothing for 1.5 s
	m.Update(tick{})
	if s := screen(m); !strings.Contains(s, "0 tok/s now") {
		t.Errorf("a stalled stream still shows a rate:\n%s", s)
	}
}

// The result: finish order, each racer's figures and its differences
// from the winner's; a failed racer last, without figures.
func TestResultLines(t *testing.T) {
	lanes := []Lane{{Label: "A"}, {Label: "B"}, {Label: "C"}}
	fins := []*Finished{
		{Racer: 0, OK: true, TTFT: 300 * time.Millisecond, TPOT: 20 * time.Millisecond, HasTPOT: true, E2E: 2 * time.Second, Tokens: 86},
		{Racer: 1, OK: false, Err: "http_status: HTTP 503"},
		{Racer: 2, OK: true, TTFT: 100 * time.Millisecond, TPOT: 10 * time.Millisecond, HasTPOT: true, E2E: 1500 * time.Millisecond, Tokens: 141, Approx: true},
	}
	got := Result(lanes, fins, []int{2, 0, 1})
	want := []string{
		"result: 1st C  E2E 1.5s  TTFT 100ms  TPOT 10ms  ~141 tok",
		"        2nd A  E2E 2s (+500ms)  TTFT 300ms (+200ms)  TPOT 20ms (+10ms)  86 tok",
		"        —   B  failed: http_status: HTTP 503",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// space asks for one rematch once a round has ended, not during one.
func TestSpaceRacesAgainWhenDone(t *testing.T) {
	asked := 0
	m, _ := newView(t, 160, 50, func() { asked++ })
	space := tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	m.Update(Started{Round: 1})
	m.Update(space)
	if asked != 0 {
		t.Fatalf("space during a round asked for %d rematches", asked)
	}
	m.Update(Ended{Round: 1, StartSkew: 300 * time.Microsecond, Positions: []int{1, 2}})
	if s := screen(m); !strings.Contains(s, "requests started 0.3ms apart") {
		t.Errorf("the start spread is not said:\n%s", s)
	}
	m.Update(space)
	m.Update(space)
	if asked != 1 {
		t.Errorf("two presses after the round asked for %d rematches, want 1 until it starts", asked)
	}
}

// A chunk changes only the lane's last text row or two (what the terminal
// is sent), except when the box turns a page: the figures follow on the
// tick, not per chunk (at 300 tok/s a count redrawn every frame cost more
// bytes than the text).
func TestAChunkRedrawsLittle(t *testing.T) {
	m, c := newView(t, 160, 50, nil)
	m.Update(Started{Round: 1})
	turns, figureChanges := 0, 0
	prev := plainRows(m)
	for k := range 2000 {
		c.t = c.t.Add(3 * time.Millisecond)
		m.Update(Chunk{Racer: k % 2, Text: fmt.Sprintf("w%04d ", k), At: time.Duration(k) * 3 * time.Millisecond, Tokens: k/2 + 1})
		rows := plainRows(m)
		changed := 0
		for i := range rows {
			if rows[i] != prev[i] {
				changed++
			}
		}
		if changed > 2 {
			turns++
		}
		if k >= 2 && rows[3] != prev[3] { // the figures' row, after each lane's first token
			figureChanges++
		}
		prev = rows
	}
	// 2000 chunks of 6 cells in two 78-cell columns of 47 text rows: about
	// 80 rows each, so two page turns per lane.
	if turns > 4 {
		t.Errorf("%d of 2000 chunks redrew more than a lane's last two text rows", turns)
	}
	if figureChanges > 0 {
		t.Errorf("the figures changed on %d chunks without a tick", figureChanges)
	}
	m.Update(tick{})
	if rows := plainRows(m); rows[3] == prev[3] {
		t.Errorf("the tick did not bring the figures up to date: %q", rows[3])
	}
}
