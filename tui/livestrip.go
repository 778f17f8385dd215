package tui

import (
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
)

// The live strip: one row under the main table that shows the text the
// probes are streaming right now, so the first screen shows tokens
// arriving without a key (the detail view's live pane shows one
// endpoint's in full). It appears once some probe has streamed text and
// then stays, so the table does not jump each time a stream ends.

// stripEvery is how often the strip reads the probes' text while one
// streams: 4 repaints a second, each a one-row change.
const stripEvery = 250 * time.Millisecond

// stripIdle is how long a finished stream stays in the strip.
const stripIdle = 5 * time.Second

type stripTickMsg struct{ id int }

type stripMsg struct {
	id   int
	ep   string
	live telemetry.LiveText
	at   time.Time
}

// liveStrip is the strip's state.
type liveStrip struct {
	seen bool // some probe streamed text: the strip has its row
	id   int  // the tick chain's id: a superseded chain dies
	on   bool // a tick chain runs
	ep   string
	live telemetry.LiveText
	at   time.Time
	// above and below are the main screen's frame around the row, from
	// its last full render ("" when the frame is another screen's);
	// dirty: only the row changed since.
	above, below string
	dirty        bool
}

// height is the strip's rows on the main screen.
func (a *app) stripHeight() int {
	if !a.strip.seen || a.height < 16 || a.screen != screenMain {
		return 0
	}
	return 1
}

// stripStart starts reading while the main screen shows and the data
// does not stand still.
func (a *app) stripStart() tea.Cmd {
	if !a.opts.LiveStrip || a.strip.on || a.frozen || a.screen != screenMain || a.opts.Replay != nil {
		return nil
	}
	a.strip.on = true
	a.strip.id++
	return a.stripRead(a.strip.id)
}

func (a *app) stripTick(id int) tea.Cmd {
	return tea.Tick(stripEvery, func(time.Time) tea.Msg { return stripTickMsg{id} })
}

// stripRead finds, in a command, the endpoint whose text changed last;
// the one shown stays while its stream goes on, so two streams at once
// do not make the row flicker between them.
func (a *app) stripRead(id int) tea.Cmd {
	data, names, cur, now := a.data, a.table.Names(), a.strip.ep, a.ctx.Now
	return func() tea.Msg {
		msg := stripMsg{id: id}
		if cur != "" {
			if l, at := data.Live(cur); l.Text != "" && !l.Done && now.Sub(at) < stripIdle {
				return stripMsg{id: id, ep: cur, live: l, at: at}
			}
		}
		for _, ep := range names {
			l, at := data.Live(ep)
			if l.Text != "" && at.After(msg.at) {
				msg.ep, msg.live, msg.at = ep, l, at
			}
		}
		return msg
	}
}

func (a *app) onStripTick(msg stripTickMsg) tea.Cmd {
	if msg.id != a.strip.id || !a.strip.on {
		return nil
	}
	if a.frozen || a.screen != screenMain {
		a.strip.on = false
		return nil
	}
	return a.stripRead(msg.id)
}

func (a *app) onStrip(msg stripMsg) tea.Cmd {
	if msg.id != a.strip.id || !a.strip.on {
		return nil
	}
	if msg.ep != "" && (msg.ep != a.strip.ep || msg.at != a.strip.at) {
		if !a.strip.seen {
			a.strip.seen = true
			a.layout()
			a.dirty = true // the table gave the row up
		}
		a.strip.ep, a.strip.live, a.strip.at = msg.ep, msg.live, msg.at
		if a.strip.above != "" && a.stripHeight() > 0 {
			a.strip.dirty = true // the row alone: the rest of the frame stands
		} else {
			a.dirty = true
		}
	}
	return a.stripTick(msg.id)
}

// stripView is the strip's row, "\n" first, or "" when it has none.
func (a *app) stripView() string {
	if a.stripHeight() == 0 {
		return ""
	}
	r := &a.ctx.Styles.Normal
	g := a.ctx.Glyphs
	l := a.strip.live
	state := r.Accent.S(" live " + g.Dot + " ")
	if l.Done || a.ctx.Now.Sub(a.strip.at) > stripIdle {
		state = r.Faint.S(" last " + g.Dot + " ")
	}
	// The model's own name (what follows the last /) is enough here; the
	// table says which server. The text gets the row's room.
	name := common.Safe(a.strip.ep[strings.LastIndex(a.strip.ep, "/")+1:])
	name = common.FitMiddle(name, min(common.Width(name), max(12, a.width/4)), g.Ellipsis)
	tps := g.Unknown
	if l.TPS > 0 {
		tps = strconv.FormatFloat(l.TPS, 'f', 0, 64)
	}
	// Fixed widths, and text that fills the row then starts it again
	// (rather than scrolling): an update writes the new characters and
	// the counts, not the whole row.
	counts := r.Faint.S(common.FitRight(strconv.Itoa(l.Tokens), 5, g.Ellipsis) + " tok " + g.Dot + " " + common.FitRight(tps, 4, g.Ellipsis) + " tok/s")
	head := state + r.Text.S(name) + " " + counts + " "
	room := a.width - common.PaintedWidth(head)
	if room < 8 {
		return "\n" + common.Cut(head, a.width)
	}
	return "\n" + common.Cut(head+pageOf(common.Safe(strings.Join(strings.Fields(l.Text), " ")), room, g.Ellipsis), a.width)
}

// pageOf is the last page of text in a row of w cells: text fills the
// row, then the next page starts (marked with ellipsis) with what
// follows. The first cell is the mark's, blank on the first page.
func pageOf(text string, w int, ellipsis string) string {
	rs := []rune(text)
	page := w - 1
	start := 0
	if len(rs) > page {
		start = (len(rs) - 1) / page * page
	}
	mark := " "
	if start > 0 {
		mark = ellipsis
	}
	return common.Cut(mark+string(rs[start:]), w)
}
