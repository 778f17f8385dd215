package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/tui/header"
)

// onClick selects the table row or alert under the pointer.
func (a *app) onClick(m tea.Mouse) tea.Cmd {
	if a.screen != screenMain || m.Button != tea.MouseLeft {
		return nil
	}
	switch {
	case m.Y >= a.layoutTableTop && m.Y < a.layoutAlertsTop-1:
		if a.table.Click(m.Y - a.layoutTableTop) {
			a.focusPane(paneTable)
		}
	case m.Y >= a.layoutAlertsTop && a.layoutAlertsH > 1:
		if a.alertP.Click(m.Y - a.layoutAlertsTop) {
			a.focusPane(paneAlerts)
		}
	}
	return nil
}

// onWheel scrolls whatever is under the pointer.
func (a *app) onWheel(m tea.Mouse) {
	d := 0
	switch m.Button {
	case tea.MouseWheelUp:
		d = -3
	case tea.MouseWheelDown:
		d = 3
	default:
		return
	}
	a.dirty = true
	switch a.screen {
	case screenHelp:
		a.help.Scroll(d)
	case screenProblems:
		a.problems.Scroll(d)
	case screenDetail:
		a.detail.Scroll(d)
	default:
		if m.Y >= a.layoutAlertsTop && a.layoutAlertsH > 1 {
			a.alertP.Move(d / 3)
			return
		}
		if gpuTop := a.layoutAlertsTop - a.layoutGPUH; a.layoutGPUH > 0 && m.Y >= gpuTop {
			a.gpuP.Scroll(d / 3)
			return
		}
		if m.Y >= header.Height {
			a.table.Scroll(d)
		}
	}
}
