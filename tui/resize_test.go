package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// checkFrame fails if the frame is taller or wider than the terminal.
func checkFrame(t *testing.T, m Model, w, h int, where string) {
	t.Helper()
	out := m.View().Content
	if out == "" {
		return
	}
	lines := strings.Split(out, "\n")
	if len(lines) > max(h, 0) {
		t.Fatalf("%s %dx%d: %d lines", where, w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > max(w, 0) {
			t.Fatalf("%s %dx%d: line %d is %d wide: %q", where, w, h, i, lw, ansi.Strip(l))
		}
	}
}

// TestResizeNeverPanics resizes every screen through 0..200 × 0..60 (all
// widths at a few heights, all heights at a few widths, in both glyph
// sets) and checks each frame stays inside the terminal.
func TestResizeNeverPanics(t *testing.T) {
	var sizes [][2]int
	step := sweepStep
	if testing.Short() {
		step = 7
	}
	for w := 0; w <= 200; w += step {
		for _, h := range []int{0, 1, 9, 10, 24} {
			sizes = append(sizes, [2]int{w, h})
		}
	}
	for h := 0; h <= 60; h++ {
		for _, w := range []int{0, 1, 39, 40, 80, 100, 120, 200} {
			sizes = append(sizes, [2]int{w, h})
		}
	}
	for _, ascii := range []bool{false, true} {
		opts := testOptions()
		opts.ASCII = ascii
		m := newSync(t, opts, 120, 40)
		for _, scr := range []struct {
			name string
			keys []string
		}{{"main", nil}, {"detail", []string{"down", "down", "enter"}}, {"help", []string{"?"}}} {
			press(m, scr.keys...)
			refresh(m)
			for _, s := range sizes {
				m.Update(tea.WindowSizeMsg{Width: s[0], Height: s[1]})
				checkFrame(t, m, s[0], s[1], scr.name)
			}
			press(m, "esc", "esc")
		}
	}
}

// TestNegativeAndFirstViewBeforeSize: the first View can come before any
// WindowSizeMsg (width 0), and bogus sizes must not panic.
func TestNegativeAndFirstViewBeforeSize(t *testing.T) {
	m := New(fixtureStore(), fixtureAlerts(), testOptions())
	_ = m.View()
	m.Update(tea.WindowSizeMsg{Width: -5, Height: -1})
	_ = m.View()
	refresh(m)
	_ = m.View()
}

// TestResizeWhileFiltering: the filter input scrolls within the footer at
// every width.
func TestResizeWhileFiltering(t *testing.T) {
	m := newSync(t, testOptions(), 120, 40)
	press(m, "/")
	for _, r := range "a-very-long-filter-text-that-scrolls" {
		press(m, string(r))
	}
	for w := 0; w <= 130; w++ {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		checkFrame(t, m, w, 24, "filter")
	}
	if !m.a.table.Filter().Editing() {
		t.Fatal("resizing must not end the edit")
	}
}

// TestResizeFleet: the fleet (server groups, shortened names, chart
// strips that come and go with the height) through every width at a few
// heights and every height at a few widths; each frame stays inside the
// terminal, and the selection survives.
func TestResizeFleet(t *testing.T) {
	m := New(fleetStore(), fleetAlerts(), testOptions())
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	refresh(m)
	press(m, "down", "down", "down")
	want, _ := m.a.table.Selected()
	step := sweepStep
	if testing.Short() {
		step = 7
	}
	for w := 0; w <= 240; w += step {
		for _, h := range []int{10, 24, 50} {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			checkFrame(t, m, w, h, "fleet")
		}
	}
	for h := 0; h <= 70; h++ {
		for _, w := range []int{40, 80, 160, 240} {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			refresh(m) // the series follow the layout (strips or sparklines)
			checkFrame(t, m, w, h, "fleet")
		}
	}
	if got, _ := m.a.table.Selected(); got.Name() != want.Name() {
		t.Errorf("selection moved from %q to %q", want.Name(), got.Name())
	}
}
