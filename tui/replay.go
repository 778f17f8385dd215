package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/header"
)

// Replay seek steps: ←/→ and shift+←/→ (or </>).
const (
	seekStep     = 30 * time.Second
	seekLongStep = 5 * time.Minute
)

// seekMsg is a finished seek.
type seekMsg struct {
	target time.Time
	err    error
}

// replayKey handles the replay controls; ok is false for other keys (and
// always without Options.Replay: the bindings are disabled then).
func (a *app) replayKey(k tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	rc := a.opts.Replay
	if rc == nil {
		return nil, false
	}
	km := &a.keys
	switch {
	case key.Matches(k, km.Pause):
		if rc.Paused() {
			rc.Resume()
		} else {
			rc.Pause()
		}
	case key.Matches(k, km.SeekBack):
		return a.seekBy(-seekStep), true
	case key.Matches(k, km.SeekFwd):
		return a.seekBy(seekStep), true
	case key.Matches(k, km.SeekBackLong):
		return a.seekBy(-seekLongStep), true
	case key.Matches(k, km.SeekFwdLong):
		return a.seekBy(seekLongStep), true
	case key.Matches(k, km.Speed1):
		rc.SetSpeed(1)
	case key.Matches(k, km.Speed10):
		rc.SetSpeed(10)
	case key.Matches(k, km.SpeedMax):
		rc.SetSpeed(a.opts.MaxSpeed)
	default:
		return nil, false
	}
	// The header shows the new state now; the read brings the clock.
	a.dirty = true
	if a.frozen {
		return nil, true
	}
	return a.refetch(), true
}

// seekBy seeks d from the replay's time (or from the seek still running),
// within the recording's bounds.
func (a *app) seekBy(d time.Duration) tea.Cmd {
	if a.frozen {
		// The frozen figures would stay while the clock moved.
		a.flash("frozen: p to resume first")
		return nil
	}
	base := a.opts.Clock()
	if a.seeking {
		base = a.seekTo
	}
	t := base.Add(d)
	if first, last := a.opts.Replay.Bounds(); !first.IsZero() && !last.IsZero() {
		if t.After(last) {
			t = last
		}
		if t.Before(first) {
			t = first
		}
	}
	a.seekTo = t
	if a.seeking {
		a.seekAgain = true
		return nil
	}
	a.seeking = true
	return a.seekCmd(t)
}

// seekCmd seeks in a command: Seek reads the recording.
func (a *app) seekCmd(t time.Time) tea.Cmd {
	rc := a.opts.Replay
	return func() tea.Msg { return seekMsg{target: t, err: rc.Seek(t)} }
}

func (a *app) onSeek(msg seekMsg) tea.Cmd {
	if a.seekAgain {
		a.seekAgain = false
		if !a.seekTo.Equal(msg.target) {
			return a.seekCmd(a.seekTo) // keys pressed meanwhile
		}
	}
	a.seeking = false
	a.quietBell = true // alerts firing at the new time are not news
	if msg.err != nil {
		// The replay holds what it read up to the error: show both.
		a.flashFor("seek failed: "+common.Safe(msg.err.Error()), 10*time.Second)
	}
	if a.frozen {
		return nil
	}
	return a.refetch()
}

// replayInfo is the header's REPLAY segment (nil when not replaying).
func (a *app) replayInfo() *header.Replay {
	rc := a.opts.Replay
	if rc == nil {
		return nil
	}
	first, last := rc.Bounds()
	sp := rc.Speed()
	return &header.Replay{Speed: sp, Max: sp >= min(a.opts.MaxSpeed, 1e9), Paused: rc.Paused(), First: first, Last: last,
		Ended: !last.IsZero() && !a.ctx.Now.Before(last), Cut: rc.Cut()}
}
