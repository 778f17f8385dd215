package detail

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/alerts"
	"github.com/ttftop/ttftop/tui/chart"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
	"github.com/ttftop/ttftop/tui/why"
)

func itoa(n int) string { return strconv.Itoa(n) }

// sideBySide is the width at and above which two charts share a row.
const sideBySide = 100

func (m *Model) chartWidth() int {
	if m.width >= sideBySide {
		return (m.width - 2) / 2
	}
	return max(m.width, 1)
}

func (m *Model) chartHeight() int { return min(max(m.height/3, 6), 12) }

// title is the endpoint's name, model, engine and URL, and its SLO state,
// which always shows: where the line is short the URL is shortened, then
// the model, engine and URL go (the table says them), then the name is
// cut in the middle.
func (m *Model) title(w int) string {
	st := m.ctx.Styles
	g := m.ctx.Glyphs
	name := " " + common.Safe(m.name)
	if !m.hasEP {
		return common.Cut(st.Title.S(name)+st.Normal.Stale.S("  endpoint no longer reported"), w)
	}
	model := m.ep.Model
	if strings.HasSuffix(m.name, model) {
		model = "" // the name says it already
	}
	var extras []string
	for _, s := range []string{model, string(m.ep.Engine), m.ep.BaseURL} {
		if s != "" {
			extras = append(extras, " "+g.Dot+" "+common.Safe(s))
		}
	}
	badge := string(m.badge)
	if badge == "" || badge == "—" {
		badge = g.Unknown + " (no SLO)"
	}
	slo := "  SLO " + badge
	restarted := format.Restarted(m.ep.Endpoint, m.ctx.Now)
	if restarted != "" {
		restarted = "  " + restarted
	}
	// The restart said whole, else as its mark, else not: the name and
	// the SLO state come first.
	if restarted != "" && w-common.Width(slo)-common.Width(restarted) < minNameCells {
		restarted = "  " + format.RestartedMark
	}
	if w-common.Width(slo)-common.Width(restarted) < minNameCells {
		restarted = ""
	}
	room := w - common.Width(slo) - common.Width(restarted)
	extras = fitExtras(extras, room-common.Width(name), g.Ellipsis)
	var b strings.Builder
	if nameRoom := max(room-common.Width(strings.Join(extras, "")), 0); common.Width(name) > nameRoom {
		name = common.FitMiddle(name, nameRoom, g.Ellipsis)
	}
	b.WriteString(st.Title.S(name))
	for _, e := range extras {
		b.WriteString(st.Normal.Faint.S(e))
	}
	b.WriteString(st.Normal.Stale.S(restarted))
	b.WriteString(m.ctx.Paint(&st.Normal, format.BadgeKind(m.badge)).S(slo))
	return common.Cut(b.String(), w)
}

// minNameCells is the least of a cut name the title keeps before saying
// a restart.
const minNameCells = 16

// minURLCells is the least of a shortened URL worth showing.
const minURLCells = 14

// fitExtras keeps the title's extras within room cells: the last (the
// URL) cut in the middle while it keeps minURLCells, then the last ones
// dropped.
func fitExtras(extras []string, room int, ellipsis string) []string {
	for len(extras) > 0 {
		used := common.Width(strings.Join(extras, ""))
		if used <= room {
			return extras
		}
		last := extras[len(extras)-1]
		if i := strings.Index(last, "://"); i >= 0 {
			// the scheme goes first: the host and port say more
			extras[len(extras)-1] = last[:strings.LastIndex(last[:i], " ")+1] + last[i+3:]
			continue
		}
		if cut := common.Width(last) - (used - room); cut >= minURLCells {
			extras[len(extras)-1] = common.FitMiddle(last, cut, ellipsis)
			return extras
		}
		extras = extras[:len(extras)-1]
	}
	return extras
}

// summary flows every figure of the endpoint, each with its state, over
// as many lines as the width needs.
func (m *Model) summary(w int) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	type item struct{ label, text string }
	var items []item
	dist := func(sigs map[telemetry.Signal]telemetry.SignalSnapshot, sig telemetry.Signal) string {
		s, ok := sigs[sig]
		text := format.Percentiles(s, 50, 90, 99)
		if ok && text != "" {
			text += " n=" + figures.Number(s.Count)
			if cov := format.Coverage(s, ctx.Now); cov != "" {
				text += " (" + cov + ")"
			}
		}
		c := format.Signal(s, ok, text, ctx.Now, 80, ctx.Glyphs.Unknown)
		return ctx.Paint(r, c.Kind).S(c.Text)
	}
	scalar := func(sigs map[telemetry.Signal]telemetry.SignalSnapshot, sig telemetry.Signal) string {
		s, ok := sigs[sig]
		text := format.Scalar(s)
		c := format.Signal(s, ok, text, ctx.Now, 40, ctx.Glyphs.Unknown)
		if notes := rateNotes(s); notes != "" && c.Text != "" {
			c.Text += " (" + notes + ")"
		}
		return ctx.Paint(r, c.Kind).S(c.Text)
	}
	// Each figure says whose it is: the client's (probe) first, then the
	// engine's own beside it, never one in place of the other.
	label := func(sig telemetry.Signal, s telemetry.SignalSnapshot, server bool) string {
		switch {
		case server:
			return sig.Info().Title + " (server)"
		case telemetry.ClientSignal(sig) && telemetry.SourceKindOf(s.Source) == telemetry.SourceProbe:
			return sig.Info().Title + " (probe)"
		}
		return sig.Info().Title
	}
	latency := []telemetry.Signal{telemetry.TTFT, telemetry.TPOT, telemetry.ITL, telemetry.E2E}
	for _, sig := range latency {
		items = append(items, item{label(sig, m.ep.Signals[sig], false), dist(m.ep.Signals, sig)})
	}
	for _, sig := range []telemetry.Signal{telemetry.OutputTPS, telemetry.ErrorRate, telemetry.Running, telemetry.Waiting, telemetry.KVCache} {
		items = append(items, item{label(sig, m.ep.Signals[sig], false), scalar(m.ep.Signals, sig)})
	}
	// Goodput exists only where latency objectives judge the probes.
	if g, ok := m.ep.Signals[telemetry.Goodput]; ok {
		text := format.Scalar(g)
		if text != "" && g.Count > 0 {
			text += " of " + figures.Number(g.Count) + " probes" // the age that may follow is another number
		}
		c := format.Signal(g, true, text, ctx.Now, 40, ctx.Glyphs.Unknown)
		items = append(items, item{label(telemetry.Goodput, g, false), ctx.Paint(r, c.Kind).S(c.Text)})
	}
	for _, sig := range latency {
		if _, ok := m.ep.Server[sig]; ok {
			items = append(items, item{label(sig, telemetry.SignalSnapshot{}, true), dist(m.ep.Server, sig)})
		}
	}
	for _, sig := range []telemetry.Signal{telemetry.OutputTPS, telemetry.ErrorRate} {
		if _, ok := m.ep.Server[sig]; ok {
			items = append(items, item{label(sig, telemetry.SignalSnapshot{}, true), scalar(m.ep.Server, sig)})
		}
	}
	var lines []string
	var cur strings.Builder
	curW := 0
	sep := "  " + ctx.Glyphs.Dot + " "
	for _, it := range items {
		s := r.Faint.S(it.label+" ") + it.text
		sw := ansi.StringWidth(it.label) + 1 + ansi.StringWidth(it.text)
		if curW > 0 && curW+len([]rune(sep))+sw > w {
			lines = append(lines, cur.String())
			cur.Reset()
			curW = 0
		}
		if curW == 0 {
			cur.WriteString("  ")
			curW = 2
		} else {
			cur.WriteString(r.Faint.S(sep))
			curW += len([]rune(sep))
		}
		cur.WriteString(s)
		curW += sw
	}
	if curW > 0 {
		lines = append(lines, cur.String())
	}
	return strings.Join(lines, "\n")
}

// objectives lists every objective judged on the endpoint with its state
// and figure, what fires first.
func (m *Model) objectives(w int) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	if !m.data.HasObjectives {
		return ""
	}
	if len(m.data.Objectives) == 0 {
		return r.Faint.S("  objectives: none apply")
	}
	lines := []string{r.Faint.S("  objectives")}
	for _, a := range m.data.Objectives {
		word, kind, text := alerts.Describe(a, ctx.Glyphs)
		line := "    " + ctx.Paint(r, kind).S(common.Fit(word, 8, "")) + " " + r.Text.S(text)
		if a.Description != "" {
			line += r.Faint.S(" " + ctx.Glyphs.Dot + " " + common.Safe(a.Description))
		}
		lines = append(lines, common.Cut(line, w))
	}
	return strings.Join(lines, "\n")
}

// whyView is the diagnosis when it names a cause: the latency's terms,
// each cause with its evidence, since when and the next step.
func (m *Model) whyView(w int) string {
	if m.data.Diagnosis == nil {
		return ""
	}
	lines := append([]string{m.ctx.Styles.Normal.Faint.S("  why")}, why.Lines(m.ctx, *m.data.Diagnosis, "    ", w)...)
	return strings.Join(lines, "\n")
}

// chartsView draws TTFT and TPOT with their SLO thresholds, again only
// when a chart's heading (notes, ages) or points changed.
func (m *Model) chartsView(w int) string {
	cw, ch := m.chartWidth(), m.chartHeight()
	ttft := m.chartHead(telemetry.TTFT, m.data.TTFT, m.data.TTFTThr, m.data.HasTTFTThr, cw)
	tpot := m.chartHead(telemetry.TPOT, m.data.TPOT, m.data.TPOTThr, m.data.HasTPOTThr, cw)
	h := m.key()
	h.Int(ch)
	h.Value(ttft) // the charts' whole input, heading included
	h.Value(tpot)
	return m.charts.Get(h, func() string {
		a, b := ttft.render(m.ctx, ch), tpot.render(m.ctx, ch)
		if w >= sideBySide {
			return common.Columns([]string{a, b}, []int{cw, w - cw - 2}, 2)
		}
		return a + "\n\n" + b
	})
}

// chartIn is one chart's heading (cheap, drawn every refresh) and line.
type chartIn struct {
	head string
	line chart.Line
}

func (c chartIn) render(ctx *common.Context, h int) string {
	c.line.Height = h
	return c.head + "\n" + c.line.Render(ctx.Glyphs, ctx.Styles)
}

func (m *Model) chartHead(sig telemetry.Signal, vals []float64, thr float64, hasThr bool, w int) chartIn {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	info := sig.Info()
	bin := ctx.Window / time.Duration(max(len(vals), 1))
	base := " " + info.Title + " mean per " + figures.Window(max(bin, time.Second).Round(100*time.Millisecond)) +
		" over " + figures.Window(ctx.Window)
	cov := format.Coverage(m.ep.Signals[sig], ctx.Now)
	var note string
	notePaint := r.Faint
	switch {
	case allNaN(vals):
		note, notePaint = "no data in window", r.NoData
	case hasThr:
		note = "SLO " + figures.Value(thr, info.Unit) + " " + ctx.Glyphs.BreachMark + " = above SLO"
	default:
		note = "no SLO threshold"
	}
	if s, ok := m.ep.Signals[sig]; ok && (s.State == telemetry.Stale || s.State == telemetry.Error) {
		note, notePaint = format.StateWord(s.State)+" "+figures.Age(s.Age(ctx.Now))+" "+ctx.Glyphs.Dot+" "+note, r.Stale
	}
	c := chart.Line{Values: vals, Unit: info.Unit, Threshold: thr, HasThreshold: hasThr,
		Span: ctx.Window, Width: w}
	if c.ThresholdOffScale() && !allNaN(vals) {
		note = "SLO " + figures.Value(thr, info.Unit) + " far above the data"
	}
	// The note says more than the coverage; neither is cut mid-word: the
	// coverage goes first, then the note unless it is a state (STALE).
	title := withCoverage(base, cov, w-2-common.Width(note))
	if common.Width(title)+2+common.Width(note) > w && notePaint != r.Stale && notePaint != r.NoData {
		note = ""
		title = withCoverage(base, cov, w)
	}
	head := ctx.Styles.Title.S(title)
	if note != "" {
		head += notePaint.S("  " + note)
	}
	return chartIn{head: common.Cut(head, w), line: c}
}

func allNaN(v []float64) bool {
	for _, x := range v {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// rateNotes says what a rate's figure covers: its rate window when that
// is not the viewed one, and that it reads low over a young series.
func rateNotes(s telemetry.SignalSnapshot) string {
	var notes []string
	if rw := format.RateWindow(s); rw != "" {
		notes = append(notes, "rate "+rw)
	}
	if y := format.Young(s); y != "" {
		notes = append(notes, y)
	}
	return strings.Join(notes, "; ")
}

// fedBy says, under the summary, what each source feeding the endpoint is
// (its description: a PromQL store's endpoints, rate window, and what is
// history backfilled and what live since when); "" when none describes
// itself.
func (m *Model) fedBy(w int) string {
	ids := map[string]bool{}
	for _, s := range m.ep.Signals {
		if s.Source != "" {
			ids[s.Source] = true
		}
	}
	var lines []string
	for _, src := range m.sources {
		if src.Description == "" || !ids[src.Kind.At(src.URL)] {
			continue
		}
		name := common.Safe(src.Name)
		if name == "" {
			name = common.Safe(string(src.Kind))
		}
		lines = append(lines, noteLines(m.ctx.Styles.Normal.Faint, "from "+name+": "+common.Safe(src.Description), w)...)
	}
	return strings.Join(lines, "\n")
}
