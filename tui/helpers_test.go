package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func noEnv(string) string { return "" }

func testOptions() Options {
	return Options{Theme: "mono", Clock: fixedClock, Refresh: time.Hour, Getenv: noEnv}
}

// newSync builds a model and drives it without a Program: size, then one
// refresh applied synchronously (tick commands are never run: they sleep).
func newSync(tb testing.TB, opts Options, w, h int) Model {
	tb.Helper()
	m := New(fixtureStore(), fixtureAlerts(), opts)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	refresh(m)
	return m
}

// refresh runs a fetch synchronously and applies it, and the read the
// first data asks for when the rows' charts want another number of
// points.
func refresh(m Model) {
	for range 3 {
		m.a.inflight = false
		if cmd := m.a.fetch(); cmd != nil {
			m.Update(cmd())
		}
		if m.a.table.SeriesPoints() == m.a.sparkN {
			return
		}
	}
}

// rings reports whether cmd (or any command of a batch) rings the bell.
func rings(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if rings(c) {
				return true
			}
		}
	case tea.RawMsg:
		return msg.Msg == "\a"
	}
	return false
}

// press sends keys; commands they return are dropped except refreshes,
// which refresh() replays.
func press(m Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "shift+left":
		return tea.KeyPressMsg{Code: tea.KeyLeft, Mod: tea.ModShift}
	case "shift+right":
		return tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModShift}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func plain(m Model) string { return ansi.Strip(m.View().Content) }
