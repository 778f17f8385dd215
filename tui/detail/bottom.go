package detail

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
)

// MaxProbes is how many recent probes the table lists.
const MaxProbes = 10

// bottomWidths are the probes and live panes' widths: side by side from
// 120 columns, else stacked at full width.
func (m *Model) bottomWidths() (int, int) {
	if m.width >= 120 {
		pw := m.width * 3 / 5
		return pw, m.width - pw - 2
	}
	return m.width, m.width
}

// bottom is the last row: recent probes and the live token pane.
func (m *Model) bottom(probes, live string, pw, lw int) string {
	if m.width >= 120 {
		return common.Columns([]string{probes, live}, []int{pw, lw}, 2)
	}
	return probes + "\n\n" + live
}

// probesView is the probes table and the waterfall of the last probes, drawn again only when a listed probe
// changed.
func (m *Model) probesView(w int) string {
	h := m.key()
	h.Int(w)
	h.Value(m.data.Probes) // the list's and the waterfall's whole input
	return m.probesTxt.Get(h, func() string { return m.probes(w) + "\n\n" + m.waterfall(w) })
}

func (m *Model) probes(w int) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	g := ctx.Glyphs
	ps := m.data.Probes
	lines := []string{m.heading("last probes") + r.Faint.S(" newest first")}
	if len(ps) == 0 {
		return lines[0] + "\n" + r.NoData.S(" no probes yet (scrape-only endpoint, or probing off)")
	}
	// TTFA only where a listed probe reasoned first: elsewhere it is TTFT.
	withTTFA := false
	for i := len(ps) - 1; i >= 0 && len(ps)-i <= MaxProbes; i-- {
		withTTFA = withTTFA || reasoned(&ps[i])
	}
	head := " time      result  TTFT    TPOT    E2E     tokens error"
	if withTTFA {
		head = " time      result  TTFT    TTFA    TPOT    E2E     tokens error"
	}
	lines = append(lines, r.Header.S(common.Fit(head, w, g.Ellipsis)))
	for i := len(ps) - 1; i >= 0 && len(ps)-i <= MaxProbes; i-- {
		p := ps[i]
		res, paint := "OK", r.OK
		if !p.OK {
			res, paint = "FAIL", r.Bad
		}
		if p.Status != 0 {
			res += " " + itoa(p.Status)
		}
		tok := g.Unknown
		if p.OutputTokens > 0 {
			tok = itoa(p.OutputTokens)
			if p.TokensSource != "" && p.TokensSource != "usage" {
				tok = "~" + tok // counted from events, not reported
			}
		}
		ms := func(v float64) string {
			if v <= 0 {
				return g.Unknown
			}
			return figures.Millis(v)
		}
		errText := ""
		if !p.OK {
			errText = strings.TrimSpace(common.Safe(p.ErrorKind) + " " + common.Safe(p.Error))
		}
		ttfa := ""
		if withTTFA {
			ttfa = common.Fit(ms(p.TTFAms), 7, g.Ellipsis) + " "
		}
		line := " " + r.Faint.S(common.Clock(p.At)) + "  " + paint.S(common.Fit(res, 7, g.Ellipsis)) + " " +
			r.Text.S(common.Fit(ms(p.TTFTms), 7, g.Ellipsis)+" "+ttfa+common.Fit(ms(p.TPOTms), 7, g.Ellipsis)+" "+
				common.Fit(ms(p.E2Ems), 7, g.Ellipsis)+" "+common.Fit(tok, 6, g.Ellipsis)) +
			" " + r.Bad.S(errText)
		lines = append(lines, common.Cut(line, w))
	}
	return strings.Join(lines, "\n")
}

// reasoned reports whether a probe's stream reasoned before answering (or
// only reasoned): its TTFA is then its own figure, not TTFT again.
func reasoned(p *telemetry.ProbeAt) bool {
	return p.OK && ((p.ReasoningTokens != nil && *p.ReasoningTokens > 0) || p.TTFAms > p.TTFTms)
}

// liveLines is the live pane's text height.
const liveLines = 8

// live shows the current probe's response as it streams, with its rate
// (for demos): the tail of the text, wrapped to the pane.
func (m *Model) live(w int) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	l := m.data.Live
	head := m.heading("live tokens")
	if l.Text == "" && l.Tokens == 0 {
		return head + "\n" + r.NoData.S(" no response streamed yet")
	}
	state := "streaming"
	paint := r.OK
	if l.Done {
		state, paint = "done", r.Faint
		if !m.data.LiveAt.IsZero() {
			state += " " + figures.Age(ctx.Now.Sub(m.data.LiveAt)) + " ago"
		}
	}
	head += " " + paint.S(state) + r.Text.S(" "+ctx.Glyphs.Dot+" "+itoa(l.Tokens)+" tok "+ctx.Glyphs.Dot+" "+figures.Number(l.TPS)+" tok/s")
	// Multiline keeps newlines and escapes every other control rune:
	// streamed text is never interpreted by the terminal.
	text := l.Text
	// Only the tail is shown: wrap just that much of a long response.
	text = sanitize.Multiline(sanitize.Tail(text, liveLines*max(w, 1)*4), 0)
	wrapped := strings.Split(ansi.Wrap(text, max(w-2, 1), " "), "\n")
	if len(wrapped) > liveLines {
		wrapped = wrapped[len(wrapped)-liveLines:]
	}
	out := []string{common.Cut(head, w)}
	for _, s := range wrapped {
		out = append(out, " "+r.Text.S(s))
	}
	return strings.Join(out, "\n")
}
