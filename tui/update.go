package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// update routes each message to its handler; key and mouse handling live
// in update_keys.go and update_mouse.go.
func (a *app) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.resize(msg.Width, msg.Height)
		if a.race != nil {
			a.race.view.Update(msg)
		}
		if a.screen == screenDetail && !a.frozen {
			return a.refetch() // charts were read for the old width
		}
		return a.refetchSeries()
	case tickMsg:
		return a.onTick(msg)
	case dataMsg:
		return a.onData(msg)
	case liveTickMsg:
		return a.onLiveTick(msg)
	case liveMsg:
		return a.onLive(msg)
	case stripTickMsg:
		return a.onStripTick(msg)
	case stripMsg:
		return a.onStrip(msg)
	case seekMsg:
		return a.onSeek(msg)
	case raceMsg:
		return a.onRace(msg)
	case raceClosedMsg:
		a.onRaceClosed(msg)
	case tea.KeyPressMsg:
		return a.onKey(msg)
	case tea.MouseClickMsg:
		return a.onClick(msg.Mouse())
	case tea.MouseWheelMsg:
		a.onWheel(msg.Mouse())
	case tea.PasteMsg:
		if f := a.table.Filter(); f.Editing() {
			f.Paste(msg.Content)
			a.table.FilterChanged()
			a.dirty = true
		}
	}
	return nil
}

func (a *app) onTick(msg tickMsg) tea.Cmd {
	if msg.id != a.tickID || a.frozen {
		return nil
	}
	return tea.Batch(a.fetch(), a.startTick())
}

func (a *app) onData(msg dataMsg) tea.Cmd {
	if msg.seq == a.seq {
		a.inflight = false
	}
	if msg.seq < a.minSeq || msg.seq <= a.applied || a.frozen {
		return nil // late result, for an old window, or frozen meanwhile
	}
	a.applied = msg.seq
	if a.note != "" && !time.Now().Before(a.noteUntil) {
		a.note, a.dirty = "", true
	}
	// The header clock and the ages shown move every second even when
	// the data does not.
	if msg.now.Unix() != a.ctx.Now.Unix() {
		a.dirty = true
	}
	a.ctx.Now = msg.now
	var bell tea.Cmd
	if msg.fp != a.fp || !a.haveData {
		a.fp, a.haveData, a.dirty = msg.fp, true, true
		a.snap, a.alertList = msg.snap, msg.alerts
		a.problems.SetData(msg.snap)
		a.problems.SetCauses(msg.causes)
		a.table.SetRows(msg.rows)
		a.alertP.SetNames(a.table.Names())
		a.alertP.SetCauses(msg.causes)
		a.alertP.SetAlerts(msg.alerts)
		a.gpuP.SetDevices(msg.snap.GPUs)
		bell = a.checkBell(msg.alerts)
		a.layout()
		if cmd := a.refetchSeries(); cmd != nil {
			bell = tea.Batch(bell, cmd)
		}
	}
	bell = tea.Batch(bell, a.stripStart())
	if a.detailShown() {
		a.syncDetail()
		if msg.detail != nil {
			a.detail.SetData(*msg.detail)
		}
		if a.liveOn {
			return tea.Batch(bell, a.liveRestart())
		}
	}
	return bell
}

// detailShown: the detail view is on screen, or under the help screen.
func (a *app) detailShown() bool {
	return a.screen == screenDetail || (a.screen == screenHelp && a.back == screenDetail)
}

// syncDetail gives the detail view the current figures of its endpoint.
func (a *app) syncDetail() {
	a.detail.SetSources(a.snap.Sources)
	if r, ok := a.table.Row(a.detail.Name()); ok {
		a.detail.SetEndpoint(r.Endpoint, true, r.Badge)
		return
	}
	a.detail.SetEndpoint(telemetry.EndpointSnapshot{}, false, slo.BadgeNone)
}

func (a *app) onLive(msg liveMsg) tea.Cmd {
	if msg.id != a.liveID || !a.liveOn {
		return nil
	}
	if a.detail.SetLive(msg.ep, msg.live, msg.at) && a.screen == screenDetail {
		a.dirty = true // under the help screen: drawn when it closes
	}
	return a.liveTick()
}

// checkBell rings once when an alert starts firing (not for alerts
// already firing when ttftop started).
func (a *app) checkBell(al []slo.Alert) tea.Cmd {
	now := map[string]bool{}
	ring := false
	for _, x := range al {
		if x.State != slo.Firing {
			continue
		}
		k := x.Objective + "\x00" + x.Endpoint
		now[k] = true
		if !a.firing[k] && a.applied > 1 {
			ring = true
		}
	}
	a.firing = now
	if a.quietBell {
		ring, a.quietBell = false, false
	}
	if ring && a.opts.Bell {
		return tea.Raw("\a")
	}
	return nil
}

// setWindow and setRefresh apply a new choice and read at once.
func (a *app) setWindow(i int) tea.Cmd {
	i = min(max(i, 0), len(a.windows)-1)
	if i == a.wi {
		return nil
	}
	if a.frozen {
		// The frozen figures are for the frozen window: changing the
		// label without the data would lie.
		a.flash("frozen: p to resume first")
		return nil
	}
	a.wi, a.ctx.Window, a.dirty = i, a.windows[i], true
	if a.opts.OnWindow != nil {
		a.opts.OnWindow(a.ctx.Window)
	}
	return a.refetch()
}

func (a *app) setRefresh(i int) tea.Cmd {
	i = min(max(i, 0), len(a.refreshes)-1)
	if i == a.ri {
		return nil
	}
	a.ri, a.ctx.Refresh, a.dirty = i, a.refreshes[i], true
	if a.frozen {
		return nil
	}
	return a.startTick() // new id: the old chain stops
}

func (a *app) toggleFreeze() tea.Cmd {
	a.frozen, a.dirty = !a.frozen, true
	if a.frozen {
		a.tickID++
		a.liveOn = false
		return nil
	}
	cmds := []tea.Cmd{a.refetch(), a.startTick()}
	if a.screen == screenDetail {
		cmds = append(cmds, a.liveTick())
	}
	return tea.Batch(cmds...)
}

// refetch reads now, dropping any result already in flight (it was asked
// for another window or endpoint).
func (a *app) refetch() tea.Cmd {
	a.inflight = false
	cmd := a.fetch()
	a.minSeq = a.seq
	return cmd
}
