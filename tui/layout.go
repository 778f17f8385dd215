package tui

import "github.com/ttftop/ttftop/tui/header"

// Minimum size for the normal screens; below it the too-small screen
// says so instead of drawing a garbled UI.
const (
	MinWidth  = 40
	MinHeight = 10
)

func (a *app) tooSmall() bool { return a.width < MinWidth || a.height < MinHeight }

func (a *app) resize(w, h int) {
	a.width, a.height = max(w, 0), max(h, 0)
	a.footer.SetWidth(0) // trimmed by shortHelp instead
	a.dirty = true
	a.layout()
}

// layout sizes the panes for the current screen; every size is clamped to
// ≥ 0 so nothing downstream sees a negative width.
func (a *app) layout() {
	w, h := a.width, a.height
	body := max(h-header.Height-1, 0) // header above, footer below
	a.detail.SetSize(w, body)
	a.help.SetSize(w, body)
	a.problems.SetSize(w, body)
	alertsH := 1
	n := a.alertP.Len()
	if h >= 16 && n > 0 {
		alertsH = min(1+n, max(3, h/4))
	}
	a.layoutGPUH = a.gpuHeight(max(body-1-alertsH, 0))
	stripH := a.stripHeight()
	tableH := max(body-1-alertsH-a.layoutGPUH-stripH, 1) // info line between
	a.table.SetSize(w, tableH)
	// Lines the table leaves blank (its rows and their charts at the
	// common height use fewer) go to the alerts, then to a GPU panel
	// that cannot show every device; what is left makes the first rows'
	// charts taller. So no band of the screen stays blank while alerts
	// or GPUs are cut off (at 160×50 a dozen endpoints sat over twenty
	// empty lines).
	if spare := tableH - a.table.Lines(); spare > 0 {
		grow := 0
		if h >= 16 && n > 0 {
			grow = min(spare, 1+n-alertsH)
			alertsH += grow
		}
		if a.layoutGPUH > 0 {
			more := min(spare-grow, a.gpuP.Want()-a.layoutGPUH)
			a.layoutGPUH += more
			grow += more
		}
		tableH -= grow
		a.table.SetSize(w, tableH)
	}
	a.gpuP.SetSize(w, a.layoutGPUH)
	a.alertP.SetSize(w, alertsH)
	a.layoutAlertsH = alertsH
	a.layoutTableTop = header.Height
	a.layoutAlertsTop = header.Height + tableH + 1 + stripH + a.layoutGPUH
	if !a.canFocus(a.focus) {
		a.focusPane(paneTable)
	}
}

// canFocus: the pane is on screen with something to move through. The
// GPU panel takes the keys only while it cannot show every device.
func (a *app) canFocus(p pane) bool {
	switch p {
	case paneGPUs:
		return a.layoutGPUH > 0 && a.gpuP.Cut()
	case paneAlerts:
		return a.layoutAlertsH > 1
	}
	return true
}

// nextPane is the pane tab moves to: table, GPU panel, alerts, around.
func (a *app) nextPane() pane {
	for p := (a.focus + 1) % 3; p != a.focus; p = (p + 1) % 3 {
		if a.canFocus(p) {
			return p
		}
	}
	return a.focus
}

// focusPane gives the keys to one pane; only the pane that has them
// shows its mark, so one ▸ says where the keys go.
func (a *app) focusPane(p pane) {
	a.focus = p
	a.table.Focus(p == paneTable)
	a.gpuP.Focus(p == paneGPUs)
	a.alertP.Focus(p == paneAlerts)
	a.dirty = true
}
