package detail

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/chart"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

// panelsView is the middle row: ITL distribution, tokens per event, GPU;
// drawn again only when the hash of what they show changed.
func (m *Model) panelsView(w int) string {
	rows := m.gpuRows()
	h := m.key()
	h.Value(m.panelsInput(rows))
	return m.panels.Get(h, func() string { return m.renderPanels(w, rows) })
}

// panelsIn is what the middle row is drawn from, hashed whole as its
// redraw key.
type panelsIn struct {
	Window    time.Duration
	ITL       []telemetry.Bucket
	ITLThr    float64
	HasITLThr bool
	// Coverage is the ITL heading's "(14s of data)", the one text that
	// moves with the clock: kept to what it reads, so the row is not
	// drawn again every refresh.
	Coverage string
	Probes   []telemetry.ProbeAt // tokens per event
	Probed   bool
	Shared   string // the GPU panel's note on shared GPUs
	// MeasuredMBU picks the GPU panel's last note (measured or estimated).
	MeasuredMBU bool
	Rows        []gpuRow
}

func (m *Model) panelsInput(rows []gpuRow) panelsIn {
	return panelsIn{Window: m.ctx.Window, ITL: m.data.ITL, ITLThr: m.data.ITLThr, HasITLThr: m.data.HasITLThr,
		Coverage: format.Coverage(m.ep.Signals[telemetry.ITL], m.ctx.Now), Probes: m.data.Probes, Probed: m.probed(),
		Shared: sharedNote(m.ep), MeasuredMBU: measuredMBU(m.ep.Signals[telemetry.MBU]), Rows: rows}
}

func (m *Model) renderPanels(w int, rows []gpuRow) string {
	if !m.probed() { // tokens per event come from probes only
		if w >= 80 {
			cw := (w - 2) / 2
			return common.Columns([]string{m.itl(cw), m.gpu(w-cw-2, rows)}, []int{cw, w - cw - 2}, 2)
		}
		return m.itl(w) + "\n\n" + m.gpu(w, rows)
	}
	switch {
	case w >= 120:
		cw := (w - 4) / 3
		return common.Columns([]string{m.itl(cw), m.tokensPerEvent(cw), m.gpu(w-2*cw-4, rows)},
			[]int{cw, cw, w - 2*cw - 4}, 2)
	case w >= 80:
		cw := (w - 2) / 2
		left := m.itl(cw) + "\n\n" + m.tokensPerEvent(cw)
		return common.Columns([]string{left, m.gpu(w-cw-2, rows)}, []int{cw, w - cw - 2}, 2)
	}
	return m.itl(w) + "\n\n" + m.tokensPerEvent(w) + "\n\n" + m.gpu(w, rows)
}

// probed: some figure of the endpoint comes from a client (probe)
// source, or probes are listed. The panels only probes fill (tokens per
// event, last probes, live tokens) are drawn for such endpoints alone: a
// PromQL or scrape-only endpoint would show them empty for ever.
func (m *Model) probed() bool {
	if len(m.data.Probes) > 0 || m.data.Live.Text != "" || m.data.Live.Tokens > 0 {
		return true
	}
	for _, s := range m.ep.Signals {
		if s.Source != "" && telemetry.SideOf(telemetry.SourceKindOf(s.Source)) == telemetry.Client {
			return true
		}
	}
	return false
}

func (m *Model) heading(s string) string { return m.ctx.Styles.Title.S(" " + s) }

// withCoverage is s with the window's coverage ("(14s of data)": history
// shorter than the window) when there is one and it fits in w cells; a
// heading cut mid-word says less than one without it.
func withCoverage(s, cov string, w int) string {
	if cov == "" {
		return s
	}
	if t := s + " (" + cov + ")"; common.Width(t) <= w {
		return t
	}
	return s
}

// itl draws the ITL histogram over the window from cumulative buckets.
func (m *Model) itl(w int) string {
	r := &m.ctx.Styles.Normal
	g := m.ctx.Glyphs
	b := m.data.ITL
	over := withCoverage(" over "+figures.Window(m.ctx.Window), format.Coverage(m.ep.Signals[telemetry.ITL], m.ctx.Now),
		w-common.Width(" ITL distribution"))
	head := m.heading("ITL distribution") + r.Faint.S(over)
	if len(b) == 0 || b[len(b)-1].Count <= 0 {
		return head + "\n" + r.NoData.S(" "+format.NoDataText)
	}
	total := b[len(b)-1].Count
	bars := make([]chart.Bar, 0, len(b))
	prev, prevBound := 0.0, 0.0
	le := "≤"
	if g.ASCII {
		le = "<="
	}
	for _, bk := range b {
		n := bk.Count - prev
		prev = bk.Count
		label := le + figures.Millis(bk.UpperBound*1000)
		if math.IsInf(bk.UpperBound, 1) {
			label = ">" + figures.Millis(prevBound*1000)
		}
		bad := m.data.HasITLThr && prevBound*1000 >= m.data.ITLThr
		prevBound = bk.UpperBound
		bars = append(bars, chart.Bar{Label: label, Value: n, Bad: bad,
			Note: figures.Number(n) + " " + figures.Percent(n/total*100)})
	}
	bars = trimEmpty(bars)
	head += r.Faint.S(" n=" + figures.Number(total))
	return common.Cut(head, w) + "\n" + chart.Bars(bars, w-1, g, r)
}

// trimEmpty drops empty buckets at both ends; the middle ones stay so the
// shape (e.g. a bimodal stall) is honest.
func trimEmpty(b []chart.Bar) []chart.Bar {
	lo, hi := 0, len(b)
	for lo < hi && b[lo].Value == 0 {
		lo++
	}
	for hi > lo && b[hi-1].Value == 0 {
		hi--
	}
	return b[lo:hi]
}

// tokensPerEvent: servers that send several tokens per SSE event make
// per-event gaps a poor ITL; this shows how often that happens.
func (m *Model) tokensPerEvent(w int) string {
	r := &m.ctx.Styles.Normal
	head := m.heading("tokens/event")
	labels := []string{"1", "2", "3-4", "5-8", "9-16", ">16"}
	counts := make([]float64, len(labels))
	events, tokens := 0.0, 0.0
	for _, p := range m.data.Probes {
		if len(p.TokensPerEvent) == 0 {
			continue
		}
		for _, t := range p.TokensPerEvent {
			if t <= 0 {
				continue
			}
			events++
			tokens += float64(t)
			counts[tpeBucket(t)]++
		}
	}
	if events == 0 {
		return head + "\n" + r.NoData.S(" "+format.NoDataText+" (no token counts in recent probes)")
	}
	head += r.Faint.S(" mean " + figures.Number(tokens/events) + " n=" + figures.Number(events))
	bars := make([]chart.Bar, len(labels))
	for i, l := range labels {
		bars[i] = chart.Bar{Label: l + " tok", Value: counts[i], Note: figures.Percent(counts[i] / events * 100)}
	}
	return common.Cut(head, w) + "\n" + chart.Bars(trimEmpty(bars), w-1, m.ctx.Glyphs, r)
}

func tpeBucket(t int) int {
	switch {
	case t <= 1:
		return 0
	case t == 2:
		return 1
	case t <= 4:
		return 2
	case t <= 8:
		return 3
	case t <= 16:
		return 4
	}
	return 5
}

// gpuRow is one figure of the GPU panel: its cell (state, age) and trend.
type gpuRow struct {
	label string
	cell  format.Cell
	trend []float64
}

// gpuRows reads the GPU panel's figures (cheap: no drawing).
func (m *Model) gpuRows() []gpuRow {
	ctx := m.ctx
	row := func(label string, sig telemetry.Signal, unit string, trend []float64) gpuRow {
		s, ok := m.ep.Signals[sig]
		text := ""
		if s.Value != nil {
			text = figures.Value(*s.Value, unit)
		}
		return gpuRow{label, format.Signal(s, ok, text, ctx.Now, 16, ctx.Glyphs.Unknown), trend}
	}
	rows := []gpuRow{
		row("DRAM active", telemetry.GPUMemBW, "%", m.data.DRAM),
		row(mbuLabel(m.ep.Signals[telemetry.MBU]), telemetry.MBU, "%", m.data.MBU),
		row("memory used", FBUsed, "MiB", m.data.FB),
		row("KV cache", telemetry.KVCache, "%", nil),
	}
	// Power and energy per token where GPUs are joined; the label of
	// J/token says whose output tokens it divides by, and both say when
	// they are a host's, shared with other endpoints (sharedNote).
	if s, ok := m.ep.Signals[telemetry.GPUPower]; ok {
		label := "power"
		if s.Shared != nil {
			label = "power (" + s.Shared.Scope + ")"
		}
		rows = append(rows, row(label, telemetry.GPUPower, "W", m.data.Power))
	}
	if s, ok := m.ep.Signals[telemetry.EnergyPerToken]; ok {
		label := "J/token (srv)"
		switch {
		case s.Shared != nil:
			label = "J/token (" + s.Shared.Scope + ")"
		case strings.Contains(s.Source, "probe tokens"):
			label = "J/token (probe)"
		}
		rows = append(rows, row(label, telemetry.EnergyPerToken, "J/tok", nil))
	}
	return rows
}

// sharedNote explains, in two lines, power and J/token of GPUs shared with
// other endpoints (several models on one host): the GPUs' whole draw, and
// their energy over all those endpoints' tokens; "" when not shared.
func sharedNote(ep telemetry.EndpointSnapshot) string {
	sh := ep.Signals[telemetry.EnergyPerToken].Shared
	if sh == nil {
		sh = ep.Signals[telemetry.GPUPower].Shared
	}
	if sh == nil {
		return ""
	}
	what := map[string]string{"host": "host's GPUs", "gpus": "GPUs", "group": "group's GPUs"}[sh.Scope]
	if what == "" {
		what = "GPUs"
	}
	note := fmt.Sprintf(" %s, shared by %d endpoints\n J/token = their energy / all %d's tokens", what, sh.By, sh.By)
	if sh.Partial {
		note += " (est.: partly shared)"
	}
	return note
}

// gpu shows measured DRAM-active, the MBU estimate and memory used, each
// with its state and a small trend.
func (m *Model) gpu(w int, rows []gpuRow) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	lines := []string{m.heading("GPU")}
	for _, x := range rows {
		line := " " + r.Faint.S(common.Fit(x.label, 15, ctx.Glyphs.Ellipsis)) +
			ctx.Paint(r, x.cell.Kind).S(common.FitRight(x.cell.Text, 16, ctx.Glyphs.Ellipsis))
		if x.trend != nil && w >= 15+16+3+8 {
			line += "  " + chart.Spark(x.trend, 0, false, ctx.Glyphs.Spark, r)
		}
		lines = append(lines, line)
	}
	if note := sharedNote(m.ep); note != "" {
		for _, l := range strings.Split(note, "\n") {
			lines = append(lines, noteLines(r.Faint, l, w)...)
		}
	}
	if measuredMBU(m.ep.Signals[telemetry.MBU]) {
		lines = append(lines, noteLines(r.Faint, "MBU = engine-counted bytes read / s / peak BW per GPU", w)...)
	} else {
		lines = append(lines, noteLines(r.Faint, "MBU est. = (weights + live KV bytes) / step time / peak BW", w)...)
	}
	return strings.Join(lines, "\n")
}

// measuredMBU: the engine counts the bytes it reads (not the estimate).
func measuredMBU(s telemetry.SignalSnapshot) bool { return !s.Approx && s.Value != nil }

// noteLines wraps a panel's note to w cells, each line indented by one,
// so a narrow panel shows it whole rather than cut.
func noteLines(p themes.Paint, text string, w int) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wrap(strings.TrimSpace(text), max(w-1, 8), " "), "\n") {
		out = append(out, p.S(common.Cut(" "+strings.TrimRight(l, " "), max(w, 1))))
	}
	return out
}

// mbuLabel says whether MBU is measured (the engine's bytes counter) or
// estimated (weights and KV over the step time); before any figure it is
// the estimate, the usual case.
func mbuLabel(s telemetry.SignalSnapshot) string {
	if measuredMBU(s) {
		return "MBU (engine)"
	}
	return "MBU (est.)"
}
