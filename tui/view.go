package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/header"
	"github.com/ttftop/ttftop/tui/keys"
)

// view returns the cached frame, rebuilding it only when something
// changed: Bubble Tea calls View after every message, including ones that
// change nothing (ticks while frozen, mouse motion).
func (a *app) view() tea.View {
	if a.screen == screenRace {
		return a.race.view.View() // it keeps its own frame
	}
	if a.dirty || a.strip.dirty {
		if a.dirty {
			a.strip.above, a.strip.below = "", ""
			a.frame = a.render()
		} else {
			a.frame = a.strip.above + a.stripView() + a.strip.below
		}
		if a.fold != nil {
			a.frame = a.fold.Replace(a.frame)
		}
		a.dirty, a.strip.dirty = false, false
	}
	v := tea.NewView(a.frame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	if a.mouseOff {
		v.MouseMode = tea.MouseModeNone
	}
	// WindowTitle stays empty: never set the terminal title (it would
	// echo endpoint names from the network).
	return v
}

func (a *app) render() string {
	if a.width <= 0 || a.height <= 0 {
		return ""
	}
	if a.tooSmall() {
		return a.tooSmallView()
	}
	c := a.table.Counts()
	top := a.hdr.View(&a.ctx, header.Info{
		Title: a.opts.Title, Sources: a.snap.Sources, Alerts: a.alertP.Counts(),
		Frozen: a.frozen, Shown: c.Endpoints, Total: c.AllEndpoints, ModelsShown: c.Models, Models: c.AllModels,
		Down: c.Down, Gone: c.Gone, Note: a.note, NoSLO: a.alerts == nil,
		Replay: a.replayInfo(), Recording: a.opts.Recording, Viewers: a.viewers(),
	}, a.width)
	var body string
	switch a.screen {
	case screenDetail:
		body = a.detail.View()
	case screenHelp:
		body = a.help.View()
	case screenProblems:
		body = a.problems.View()
	default:
		// Kept apart around the live row, so that a change of the row
		// alone costs no rebuild of the rest (see onStrip).
		a.strip.above = top + "\n" + a.table.View() + "\n" + a.table.Info()
		a.strip.below = a.gpuView() + "\n" + a.alertP.View() + "\n" + a.footerView()
		return a.strip.above + a.stripView() + a.strip.below
	}
	return top + "\n" + body + "\n" + a.footerView()
}

func (a *app) footerView() string {
	km := &a.keys
	r := &a.ctx.Styles.Normal
	g := a.ctx.Glyphs
	switch a.screen {
	case screenHelp:
		return a.shortHelp([]key.Binding{km.Back, km.Up, km.Down, km.Quit})
	case screenProblems:
		return a.shortHelp([]key.Binding{km.Back, km.Up, km.Down, km.Mouse, km.Quit})
	case screenDetail:
		return a.shortHelp([]key.Binding{km.Back, km.Pause, km.SeekBack, km.SeekFwd, km.Up, km.Down, km.Freeze,
			km.WindowUp, km.WindowDown, km.Help, km.Quit})
	}
	f := a.table.Filter()
	if f.Editing() || f.Active() {
		c := a.table.Counts()
		tail := "  " + strconv.Itoa(c.Endpoints) + " of " + strconv.Itoa(c.AllEndpoints) + " endpoints match " + g.Dot
		if f.Editing() {
			tail += " enter keep " + g.Dot + " esc clear"
		} else {
			tail += " esc clears"
		}
		line := r.Accent.S(" / ")
		if f.Editing() {
			// the input scrolls within what the match count leaves
			line += f.View(max(a.width-3-len(tail), 8))
		} else {
			line += r.Text.S(common.Safe(f.Value()))
		}
		return common.Cut(line+r.Faint.S(tail), a.width)
	}
	switch a.focus {
	case paneGPUs:
		return a.paneHelp("GPU panel", gpuHelp(km))
	case paneAlerts:
		return a.paneHelp("alerts pane", alertsHelp(km))
	}
	return a.shortHelp(a.keys.ShortHelp())
}

// as is binding b described as what it does in a pane.
func as(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// gpuHelp is the footer while the GPU panel has the keys: the bindings
// that move it, said as what they do there.
func gpuHelp(km *keys.Map) []key.Binding {
	return []key.Binding{as(km.Up, "scroll GPUs up"), as(km.Down, "scroll GPUs down"), as(km.PageDown, "page"),
		as(km.Top, "first"), as(km.Bottom, "last"), km.Tab, as(km.Back, "back to table"), km.GPUs, km.Help, km.Quit}
}

// alertsHelp is the footer while the alerts pane has the keys.
func alertsHelp(km *keys.Map) []key.Binding {
	return []key.Binding{as(km.Up, "previous alert"), as(km.Down, "next alert"),
		as(km.Enter, "open its endpoint"), as(km.PageDown, "page"), as(km.Back, "back to table"), km.Tab, km.Help, km.Quit}
}

// paneHelp is the footer while a pane other than the table has the keys:
// it starts by saying which.
func (a *app) paneHelp(pane string, bs []key.Binding) string {
	k := footerKey{a.screen, a.focus, a.width, a.ctx.Styles.Theme.Name}
	if k == a.footerKey && a.footerLine != "" {
		return a.footerLine
	}
	lead := pane + ": "
	line := a.ctx.Styles.Normal.Accent.S(lead) + a.shortHelpFit(bs, a.width-common.Width(lead))
	a.footerKey, a.footerLine = k, line
	return line
}

// shortHelp renders as many bindings as fit. bubbles/help v2.2.1 keeps
// adding items past the width when even its ellipsis does not fit, so the
// list is trimmed here first.
func (a *app) shortHelp(bs []key.Binding) string {
	// Cached per screen, width and theme: rendering it costs more than a
	// table row.
	k := footerKey{a.screen, a.focus, a.width, a.ctx.Styles.Theme.Name}
	if k == a.footerKey && a.footerLine != "" {
		return a.footerLine
	}
	a.footerKey, a.footerLine = k, a.shortHelpFit(bs, a.width)
	return a.footerLine
}

type footerKey struct {
	screen screen
	focus  pane
	width  int
	theme  string
}

func (a *app) shortHelpFit(bs []key.Binding, width int) string {
	for n := len(bs); n > 0; n-- {
		v := a.footer.ShortHelpView(bs[:n])
		if n < len(bs) {
			v += a.ctx.Styles.Normal.Faint.S(" " + a.ctx.Glyphs.Ellipsis)
		}
		if ansi.StringWidth(v) <= width {
			return v
		}
	}
	return ""
}

// tooSmallView fits any size, down to 1×1.
func (a *app) tooSmallView() string {
	x := "×"
	if a.ctx.Glyphs.ASCII {
		x = "x"
	}
	lines := []string{
		"terminal too small",
		"need " + strconv.Itoa(MinWidth) + x + strconv.Itoa(MinHeight) + ", have " + strconv.Itoa(a.width) + x + strconv.Itoa(a.height),
		"enlarge it, or q to quit",
	}
	if len(lines) > a.height {
		lines = lines[:a.height]
	}
	r := &a.ctx.Styles.Normal
	for i, l := range lines {
		p := r.Text
		if i == 0 {
			p = r.Bad
		}
		lines[i] = p.S(common.Fit(l, a.width, ""))
	}
	return strings.Join(lines, "\n")
}

// asciiFold is the --ascii safety net for punctuation that arrives in
// text (metric definitions, separators): one cell for one cell, so the
// layout does not move. Drawing glyphs come from themes.Glyphs already.
func asciiFold() *strings.Replacer {
	return strings.NewReplacer("·", "|", "—", "-", "–", "-", "−", "-", "×", "x", "…", ".", "≤", "<", "≥", ">",
		"▲", "^", "▼", "v", "●", "o", "✖", "x", "◌", "~", "▸", ">")
}

func (a *app) viewers() int {
	if a.opts.Viewers == nil {
		return 0
	}
	return max(a.opts.Viewers(), 1)
}
