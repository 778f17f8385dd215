package tui

import "github.com/ttftop/ttftop/telemetry"

// The GPU panel's place on the main screen, kept here so layout.go and
// view.go need one line each: it sits between the table and the alerts,
// shown by default when there are GPUs and room, hidden or shown with u.

// minTableLines is what the table keeps before the GPU panel gets room:
// its header and a few rows.
const minTableLines = 5

// gpuHeight is the panel's height out of avail lines of body: every
// device, at most half the body and never squeezing the table below
// minTableLines; 0 when hidden, without GPUs or without room for a title
// and one line.
func (a *app) gpuHeight(avail int) int {
	if a.gpusHidden || a.gpuP.Len() == 0 {
		return 0
	}
	h := min(a.gpuP.Want(), avail/2, avail-minTableLines)
	if h < 2 {
		return 0
	}
	return h
}

// gpuView is the panel with its leading newline, or nothing.
func (a *app) gpuView() string {
	if a.layoutGPUH == 0 {
		return ""
	}
	return "\n" + a.gpuP.View()
}

const gpuHiddenNote = "GPU panel hidden: u shows it"

func (a *app) toggleGPUs() {
	a.gpusHidden = !a.gpusHidden
	a.layout()
	a.dirty = true
	if a.note == gpuHiddenNote {
		a.note = "" // no longer true
	}
	switch {
	case a.gpusHidden:
		a.flash(gpuHiddenNote)
	case a.gpuP.Len() == 0:
		a.flash(noGPUPanelNote(a.snap))
	case a.layoutGPUH == 0:
		a.flash("no room for the GPU panel at this height")
	}
}

// noGPUPanelNote says why there is no GPU panel. The panel lists devices,
// which only --dcgm or --nvidia-smi report; PromQL mode joins DCGM series
// to each replica instead, so its GPU figures are in the table's rows.
func noGPUPanelNote(snap telemetry.Snapshot) string {
	promql := false
	for _, s := range snap.Sources {
		promql = promql || s.Kind == telemetry.SourcePromQL
	}
	if !promql {
		return "no GPU data: give --dcgm or --nvidia-smi"
	}
	for _, ep := range snap.Endpoints {
		for _, sig := range []telemetry.Signal{telemetry.GPUMemBW, telemetry.GPUPower} {
			if ep.Server[sig].Value != nil || ep.Signals[sig].Value != nil {
				return "GPU figures per replica are in the rows (DCGM via PromQL); device panel: --dcgm"
			}
		}
	}
	return "PromQL: no DCGM series joined to a replica; device panel: --dcgm"
}
