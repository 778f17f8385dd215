package tui

import "github.com/tokentop/tokentop/tui/header"

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
	a.gpuP.SetSize(w, a.layoutGPUH)
	tableH := max(body-1-alertsH-a.layoutGPUH, 1) // info line between
	a.table.SetSize(w, tableH)
	// Compact rows that leave lines blank give them to the alerts, so
	// that at 160×50 a dozen endpoints do not sit over twenty empty
	// lines while alerts are cut off below.
	if h >= 16 && n > 0 && !a.table.Charts() {
		if spare := tableH - a.table.Lines(); spare > 0 {
			grow := min(spare, 1+n-alertsH)
			alertsH += grow
			tableH -= grow
			a.table.SetSize(w, tableH)
		}
	}
	a.alertP.SetSize(w, alertsH)
	a.layoutAlertsH = alertsH
	a.layoutTableTop = header.Height
	a.layoutAlertsTop = header.Height + tableH + 1 + a.layoutGPUH
	if alertsH <= 1 && a.alertsFocus {
		a.alertsFocus = false
		a.focusAlerts(false)
	}
}

// focusAlerts gives the keys to the alerts pane (or back to the table);
// only the pane that has them shows its cursor, so one ▸ says where the
// keys go.
func (a *app) focusAlerts(on bool) {
	a.alertP.Focus(on)
	a.table.Focus(!on)
	a.dirty = true
}
