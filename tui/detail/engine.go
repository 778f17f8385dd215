package detail

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

// engineView is the "engine" section: the diagnosis signals the engine
// reports (queue, prefill and decode time, request and prompt rates,
// preemptions, prefix-cache hits, speculative decoding, bytes read), one
// line each with its state and source, and the definition when there is
// room. Signals the engine does not expose are left out; "" when none is.
func (m *Model) engineView(w int) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	var lines []string
	shared := commonRateWindow(m.ep.Signals)
	for _, sig := range telemetry.DiagnosisSignals() {
		s, ok := m.ep.Signals[sig]
		if !ok {
			continue
		}
		info := sig.Info()
		text := format.Scalar(s)
		if info.Distribution {
			if text = format.Percentiles(s, 50, 95, 99); text != "" {
				text += " n=" + figures.Number(s.Count)
			}
		}
		c := format.Signal(s, ok, text, ctx.Now, 40, ctx.Glyphs.Unknown)
		if rw := format.RateWindow(s); rw != "" && rw != shared && c.Text != "" {
			c.Text += " " + rw // another source's span than the heading's
		}
		line := " " + r.Faint.S(common.Fit(info.Title, 13, ctx.Glyphs.Ellipsis)) +
			ctx.Paint(r, c.Kind).S(common.FitWhole(c.Text, 40, ctx.Glyphs.Ellipsis))
		if src := telemetry.SourceKindOf(s.Source); src != "" {
			line += r.Faint.S(" " + string(src))
		}
		lines = append(lines, defined(r.Faint, line, strings.TrimPrefix(info.Definition, "server: "), w)...)
	}
	if len(lines) == 0 {
		return ""
	}
	over := " server figures over " + figures.Window(ctx.Window)
	if shared != "" {
		over += "; rates and ratios " + shared
	}
	if y := youngNote(m.ep.Signals); y != "" {
		over += "; " + format.YoungMark + " " + y
	}
	head := m.heading("engine") + r.Faint.S(over)
	return strings.Join(append([]string{common.Cut(head, w)}, lines...), "\n")
}

// defined follows a figure's line with its definition when the width
// leaves room for one (30 cells), wrapped under itself rather than cut.
func defined(p themes.Paint, line, def string, w int) []string {
	at := common.PaintedWidth(line) + 2
	if w-at < 30 {
		return []string{common.Cut(line, w)}
	}
	defs := strings.Split(ansi.Wrap(def, w-at, " "), "\n")
	out := []string{line + p.S("  "+strings.TrimRight(defs[0], " "))}
	for _, d := range defs[1:] {
		out = append(out, common.Spaces(at)+p.S(strings.TrimRight(d, " ")))
	}
	for i := range out {
		out[i] = common.Cut(out[i], w)
	}
	return out
}

// commonRateWindow is the rate window the engine signals' rates and
// ratios share (that of the first one naming any), for the heading; ""
// when none names one.
func commonRateWindow(sigs map[telemetry.Signal]telemetry.SignalSnapshot) string {
	for _, sig := range telemetry.DiagnosisSignals() {
		if rw := format.RateWindow(sigs[sig]); rw != "" {
			return rw
		}
	}
	return ""
}

// youngNote explains the young mark of the engine figures carrying it
// (the first one's age; they share a series' birth); "" when none does.
func youngNote(sigs map[telemetry.Signal]telemetry.SignalSnapshot) string {
	for _, sig := range telemetry.DiagnosisSignals() {
		if y := format.Young(sigs[sig]); y != "" {
			return y
		}
	}
	return ""
}
