package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/themes"
)

// onKey handles keys: the filter input first (it owns every key while
// editing), then keys valid everywhere, then the current screen's.
func (a *app) onKey(k tea.KeyPressMsg) tea.Cmd {
	km := &a.keys
	if a.screen == screenRace {
		return a.raceKey(k) // ctrl+c too: the race is closed first
	}
	if k.String() == "ctrl+c" {
		return tea.Quit
	}
	if f := a.table.Filter(); f.Editing() && a.screen == screenMain {
		if f.Key(k) {
			a.table.FilterChanged()
		}
		a.dirty = true
		return nil
	}
	switch {
	case key.Matches(k, km.Quit):
		return tea.Quit
	case key.Matches(k, km.Help):
		a.toggleHelp()
		return nil
	case key.Matches(k, km.Freeze):
		return a.toggleFreeze()
	case key.Matches(k, km.WindowUp):
		return a.setWindow(a.wi + 1)
	case key.Matches(k, km.WindowDown):
		return a.setWindow(a.wi - 1)
	case key.Matches(k, km.Faster):
		return a.setRefresh(a.ri - 1)
	case key.Matches(k, km.Slower):
		return a.setRefresh(a.ri + 1)
	case key.Matches(k, km.Theme):
		a.cycleTheme()
		return nil
	case key.Matches(k, km.Problems):
		a.toggleProblems()
		return nil
	case key.Matches(k, km.Mouse):
		a.mouseOff, a.dirty = !a.mouseOff, true
		if a.mouseOff {
			a.flash("mouse capture off: select text with the mouse; m turns it back on")
		} else {
			a.flash("mouse capture on")
		}
		return nil
	case key.Matches(k, km.GPUs):
		a.toggleGPUs()
		return nil
	case key.Matches(k, km.Side):
		a.serverSide, a.dirty = !a.serverSide, true
		return a.refetch()
	case key.Matches(k, km.Redraw):
		a.dirty = true
		return tea.ClearScreen
	}
	if cmd, ok := a.replayKey(k); ok {
		return cmd
	}
	switch a.screen {
	case screenHelp:
		a.scrollKeys(k, &a.help)
	case screenProblems:
		if key.Matches(k, km.Back) {
			a.toggleProblems()
			return nil
		}
		a.scrollKeys(k, &a.problems)
	case screenDetail:
		if key.Matches(k, km.Back) {
			return a.closeDetail()
		}
		a.scrollKeys(k, &a.detail)
	default:
		return a.mainKey(k)
	}
	return nil
}

// scroller is a view that scrolls (detail, help).
type scroller interface {
	Scroll(int)
	Page(int)
	Home()
	End()
}

func (a *app) scrollKeys(k tea.KeyPressMsg, s scroller) {
	if a.navKeys(k, s.Scroll, s.Page, s.Home, s.End) {
		return
	}
	if key.Matches(k, a.keys.Back) && a.screen == screenHelp {
		a.toggleHelp()
		a.dirty = true
	}
}

func (a *app) mainKey(k tea.KeyPressMsg) tea.Cmd {
	km := &a.keys
	if a.focus == paneGPUs {
		if key.Matches(k, km.Back) {
			a.focusPane(paneTable)
			return nil
		}
		if key.Matches(k, km.Tab) {
			a.focusPane(a.nextPane())
			return nil
		}
		a.scrollKeys(k, &a.gpuP)
		return nil
	}
	if a.focus == paneAlerts && a.alertsKey(k) {
		return nil
	}
	if a.cursorKeys(k, &a.table) {
		return nil
	}
	a.dirty = true
	switch {
	case key.Matches(k, km.Tab):
		a.focusPane(a.nextPane())
	case key.Matches(k, km.Enter):
		return a.openSelected()
	case key.Matches(k, km.Back):
		if a.table.Filter().Active() {
			a.table.Filter().Clear()
			a.table.FilterChanged()
		}
	case key.Matches(k, km.Filter):
		a.table.Filter().Start()
		a.focusPane(paneTable)
	case key.Matches(k, km.Sort):
		a.table.CycleSort()
	case key.Matches(k, km.SortReverse):
		a.table.ReverseSort()
	case key.Matches(k, km.Expand):
		a.dirty = a.table.ToggleExpand()
	case key.Matches(k, km.Race):
		return a.openRace()
	default:
		a.dirty = false
	}
	return nil
}

// alertsKey handles the keys that act on the alerts pane while it has
// focus (the others act as on the table); it reports whether k was one.
func (a *app) alertsKey(k tea.KeyPressMsg) bool {
	km := &a.keys
	if key.Matches(k, km.Back) {
		a.focusPane(paneTable)
		a.dirty = true
		return true
	}
	return a.cursorKeys(k, &a.alertP)
}

// cursor is a list whose selection the movement keys move (the table, the
// alerts pane).
type cursor interface {
	Move(int)
	Page(int)
	Home()
	End()
}

// cursorKeys moves c's selection for the movement keys; it reports
// whether k was one.
func (a *app) cursorKeys(k tea.KeyPressMsg, c cursor) bool {
	return a.navKeys(k, c.Move, c.Page, c.Home, c.End)
}

// navKeys applies the movement keys: a line up or down, a page, the top or
// the bottom; it reports whether k was one.
func (a *app) navKeys(k tea.KeyPressMsg, line, page func(int), top, bottom func()) bool {
	km := &a.keys
	switch {
	case key.Matches(k, km.Up):
		line(-1)
	case key.Matches(k, km.Down):
		line(1)
	case key.Matches(k, km.PageUp):
		page(-1)
	case key.Matches(k, km.PageDown):
		page(1)
	case key.Matches(k, km.Top):
		top()
	case key.Matches(k, km.Bottom):
		bottom()
	default:
		return false
	}
	a.dirty = true
	return true
}

// openSelected opens the detail view of the selected row, or of the
// selected alert's endpoint when the alerts pane has focus.
func (a *app) openSelected() tea.Cmd {
	name := ""
	if a.focus == paneAlerts {
		if al, ok := a.alertP.Selected(); ok {
			name = al.Endpoint
		}
	} else if r, ok := a.table.Selected(); ok {
		name = r.Name()
	}
	if name == "" {
		return nil
	}
	return a.openDetail(name)
}

func (a *app) openDetail(name string) tea.Cmd {
	a.detail.Open(name)
	a.screen, a.dirty = screenDetail, true
	a.layout()
	a.syncDetail()
	if a.frozen {
		// Frozen: show what the snapshot has; charts fill in on resume.
		return nil
	}
	return tea.Batch(a.refetch(), a.liveTick())
}

func (a *app) closeDetail() tea.Cmd {
	a.screen, a.dirty, a.liveOn = screenMain, true, false
	a.layout()
	return nil
}

func (a *app) toggleProblems() { a.toggleOverlay(screenProblems, a.problems.Home) }

func (a *app) toggleHelp() { a.toggleOverlay(screenHelp, a.help.Home) }

// toggleOverlay opens or closes a screen shown over another (help,
// problems). Overlays never become the screen to go back to, so esc from
// one opened over the other returns to where the first was opened.
func (a *app) toggleOverlay(s screen, home func()) {
	if a.screen == s {
		a.screen = a.back
	} else {
		if a.screen != screenHelp && a.screen != screenProblems {
			a.back = a.screen
		}
		a.screen = s
		home()
	}
	a.dirty = true
	a.layout()
}

func (a *app) cycleTheme() {
	if a.noColor {
		a.flash("NO_COLOR is set: monochrome")
		return
	}
	t := themes.Next(a.ctx.Styles.Theme)
	a.setTheme(t)
	a.flash("theme " + t.Name)
}
