package table

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/chart"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

// View renders the column header and the visible rows, exactly height
// lines of exactly width cells.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(m.header())
	lines := 1
	for i := m.offset; i < len(m.items) && lines < m.height; i++ {
		b.WriteByte('\n')
		lines++
		it := m.items[i]
		if it.row < 0 {
			b.WriteString(m.groupHeader(it))
			continue
		}
		b.WriteString(m.row(m.rows[it.row], it.row == m.cursor && !m.unfocused))
		if ch := m.rowChartLines(it.row); ch > 0 && lines+ch <= m.height {
			b.WriteByte('\n')
			b.WriteString(m.charts(m.rows[it.row], ch))
			lines += ch
		}
	}
	if len(m.rows) == 0 && m.height > 1 {
		msg := "no endpoints yet: waiting for the first observation"
		if len(m.all) > 0 {
			msg = "no endpoint matches the filter (esc clears it)"
		}
		b.WriteByte('\n')
		b.WriteString(m.ctx.Styles.Normal.Faint.S(common.Fit(" "+msg, m.width, m.ctx.Glyphs.Ellipsis)))
		lines++
	}
	for ; lines < m.height; lines++ {
		b.WriteByte('\n')
	}
	return b.String()
}

func (m *Model) header() string {
	g := m.ctx.Glyphs
	r := &m.ctx.Styles.Normal
	var b strings.Builder
	b.WriteString(" ")
	d := defs()
	for i, p := range m.cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		t := d[p.col].title
		if (p.col == ColTTFTSpark || p.col == ColTPOTSpark) && len(m.rows) == 0 {
			t = "" // no sparkline under it: the word would read as a placeholder
		}
		if p.col == ColName && m.shared != "" {
			t = common.Safe(m.shared) // the server every row is on, said once
		}
		if p.col == m.sortCol {
			arrow := g.Up
			if m.desc {
				arrow = g.Down
			}
			if p.col == ColTTFT || p.col == ColTPOT {
				// A pair sorts by its p99: the arrow marks that figure.
				t = strings.Replace(t, "/p99", "/"+arrow+"p99", 1)
			} else {
				t += arrow
			}
		}
		if d[p.col].right {
			t = common.FitRight(t, p.width, g.Ellipsis)
		} else {
			t = common.Fit(t, p.width, g.Ellipsis)
		}
		paint := r.Header
		if p.col == ColTTFTSpark || p.col == ColTPOTSpark {
			paint = r.Faint
		}
		b.WriteString(paint.S(t))
	}
	return common.Cut(b.String(), m.width)
}

// groupHeader is the line above a server's rows: the server once, how
// many endpoints it has, their engines and how many are in each SLO
// state that is not OK.
func (m *Model) groupHeader(it item) string {
	st := &m.ctx.Styles.Normal
	g := m.ctx.Glyphs
	var engines []string
	badges := map[string]int{}
	var order []string
	for _, r := range it.members {
		if r.Endpoint.IsRank() {
			continue // its server's row stands for it
		}
		if e := string(r.Endpoint.Engine); e != "" && e != "unknown" && !slices.Contains(engines, e) {
			engines = append(engines, e)
		}
		b := string(r.Badge)
		if b == "" || b == "—" || b == "OK" {
			continue
		}
		if badges[b] == 0 {
			order = append(order, b)
		}
		badges[b]++
	}
	n := servingCount(it.members)
	tail := " " + g.Dot + " " + strconv.Itoa(n) + " endpoint"
	if n != 1 {
		tail += "s"
	}
	if len(engines) > 0 {
		tail += " " + g.Dot + " " + strings.Join(engines, ", ")
	}
	for _, b := range order {
		tail += " " + g.Dot + " " + strconv.Itoa(badges[b]) + " " + b
	}
	name := common.Safe(it.server)
	line := st.Header.S(" "+name) + st.Faint.S(common.Safe(tail))
	return common.Cut(line, m.width) + common.Spaces(m.width-min(m.width, 1+common.Width(name)+common.Width(tail)))
}

func (m *Model) row(r *Row, sel bool) string {
	ctx := m.ctx
	g := ctx.Glyphs
	roles := ctx.Styles.Row(sel)
	d := defs()
	var b strings.Builder
	b.Grow(m.width * 4)
	used := 1
	if sel {
		roles.Accent.To(&b, g.Sel)
	} else {
		roles.Text.To(&b, " ")
	}
	for i, p := range m.cols {
		if i > 0 {
			roles.Text.To(&b, " ")
			used++
		}
		used += p.width
		switch p.col {
		case ColName:
			roles.Text.To(&b, common.FitMiddle(m.displayName(r), p.width, g.Ellipsis))
		case ColModel:
			roles.Faint.To(&b, common.Fit(common.Safe(r.Endpoint.Model), p.width, g.Ellipsis))
		case ColEngine:
			roles.Faint.To(&b, common.Fit(common.Safe(string(r.Endpoint.Engine)), p.width, g.Ellipsis))
		case ColTTFTSpark, ColTPOTSpark:
			if m.chartHeight() > 0 { // the charts under the row say it better
				roles.Text.To(&b, common.Spaces(p.width))
				break
			}
			b.WriteString(m.spark(r, p, roles))
		case ColSource:
			mark := r.SourceMark()
			if mark == "" {
				mark = g.Unknown
			}
			roles.Faint.To(&b, common.Fit(mark, p.width, g.Ellipsis))
		case ColSLO:
			badge, kind := string(r.Badge), format.BadgeKind(r.Badge)
			if r.Badge == "" || badge == "—" {
				badge = g.Unknown
			}
			if h, ok := r.Endpoint.Target(); ok {
				// The store says why: a down or gone target, never
				// the NO DATA or STALE its figures read.
				badge, kind = strings.ToUpper(h.State), format.TargetKind(h.State)
			}
			ctx.Paint(roles, kind).To(&b, common.Fit(badge, p.width, g.Ellipsis))
		case ColWhy:
			b.WriteString(whyCell(r, p.width, roles, g.Ellipsis))
		default:
			s, ok, text := figure(p.col, r, g.Unknown)
			c := format.Signal(s, ok, text, ctx.Now, p.width, g.Unknown)
			t := shortFigure(c.Text, p.width)
			if d[p.col].right {
				t = common.FitRight(t, p.width, g.Ellipsis)
			} else {
				t = common.Fit(t, p.width, g.Ellipsis)
			}
			ctx.Paint(roles, c.Kind).To(&b, t)
		}
	}
	if pad := m.width - used; pad > 0 {
		roles.Text.To(&b, common.Spaces(pad))
	}
	if used > m.width {
		return common.Cut(b.String(), m.width)
	}
	return b.String()
}

// NoDataShort is "no data" in a cell too narrow for it (KV%, MBU); the
// help's legend says what it means.
const NoDataShort = "n/d"

// shortFigure shortens a figure that does not fit its cell without
// losing a number: "no data" becomes NoDataShort, and a pair in one unit
// says the unit once ("~31.7ms/31.8ms" → "~31.7/31.8ms"). What still
// does not fit is cut by the caller.
func shortFigure(t string, width int) string {
	if common.Width(t) <= width {
		return t
	}
	if t == format.NoDataText {
		return NoDataShort
	}
	first, second, ok := strings.Cut(t, "/")
	if !ok {
		return t
	}
	unit := func(v string) string {
		return v[len(strings.TrimRightFunc(v, func(c rune) bool { return c < '0' || c > '9' })):]
	}
	if u := unit(second); u == "" || unit(first) != u {
		return t
	}
	return strings.TrimSuffix(first, unit(first)) + "/" + second
}

// chartHeight is the height of the TTFT and TPOT charts under every row
// when every row fits with them: few endpoints get full charts (axes,
// time labels, the SLO line), as btop's and nvitop's panels do; more get
// strips of one to three lines (a wide sparkline with its scale) while
// the lines are there; 0 = compact rows. Lines left over once every row
// has it go to the first rows (rowChartLines), so no band of the table
// stays blank.
func (m *Model) chartHeight() int {
	n := len(m.rows)
	if n == 0 || m.width < 60 {
		return 0
	}
	per := (m.height-1-(len(m.items)-n))/n - 1 // server header lines take one each
	return min(max(per, 0), maxChartHeight)
}

// strips: the charts are too short for axes and time labels.
func (m *Model) strips() bool { return m.chartHeight() < fullChartLines }

// fullChartLines is the least height with axes and time labels (a plot
// of two lines, the axis that doubles as the breach strip, the times).
const fullChartLines = 4

// rowChartLines is the chart height under row i: chartHeight, and one
// more for each of the first rows while lines are left over (past
// maxChartHeight too: the layout has given the alerts and the GPU panel
// what they need first).
//
// Compact rows that all fit with lines to spare give the first rows a
// one-line strip each, under their sparklines.
func (m *Model) rowChartLines(i int) int {
	n := len(m.rows)
	spare := max(m.height-m.Lines(), 0)
	if n == 0 || m.width < 60 {
		return 0
	}
	ch := m.chartHeight()
	if ch == 0 {
		return boolInt(i < spare)
	}
	extra := spare / n
	if i < spare%n {
		extra++
	}
	return ch + extra
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// anyCharts: some row has charts under it.
func (m *Model) anyCharts() bool { return m.rowChartLines(0) > 0 }

// Charts reports whether rows carry their charts (few endpoints).
func (m *Model) Charts() bool { return m.chartHeight() > 0 }

// maxChartHeight caps the charts every row gets before the layout gives
// spare lines to the alerts and GPU panes (what is left after those
// still makes the charts taller). Height costs bytes while values move:
// the demo at 160×50 (bench/tui_bandwidth.sh, 60 s) wrote 2.7 KB/s with
// 9-line charts, 3.2 with 10, 3.4 (median of 3) with 12, under the 4 KB/s
// budget.
const maxChartHeight = 12

func (m *Model) chartWidth() int { return max((m.width-3)/2, 1) }

// SeriesPoints is how many chart points a row's TTFT and TPOT series
// should carry for the current layout.
func (m *Model) SeriesPoints() int {
	if !m.anyCharts() {
		return sparkWidth(m.cols)
	}
	return chart.Points(m.chartWidth(), m.ctx.Glyphs.ASCII)
}

// charts draws a row's TTFT and TPOT side by side, with their SLO lines,
// from the cache while nothing they show changed.
func (m *Model) charts(r *Row, h int) string {
	ttft, tpot := m.chartLines(r, h)
	k := common.NewHash()
	k.Str(m.ctx.Styles.Theme.Name)
	k.Bool(m.ctx.Glyphs.ASCII)
	k.Int(m.width)
	k.Value(ttft) // the charts' whole input: a field added to chart.Line counts
	k.Value(tpot)
	if m.chartMemo == nil {
		m.chartMemo = map[string]*common.Memo{}
	}
	memo, ok := m.chartMemo[r.Name()]
	if !ok {
		if len(m.chartMemo) > 64 { // rows come and go: never grow without bound
			clear(m.chartMemo)
		}
		memo = &common.Memo{}
		m.chartMemo[r.Name()] = memo
	}
	return memo.Get(k, func() string { return m.drawCharts(ttft, tpot, h) })
}

// chartLines are a row's TTFT and TPOT charts, h lines high.
func (m *Model) chartLines(r *Row, h int) (ttft, tpot chart.Line) {
	cw := m.chartWidth()
	unit := telemetry.TTFT.Info().Unit
	strip := m.strips()
	ttft = chart.Line{Values: r.TTFT, Unit: unit, Threshold: r.TTFTThr, HasThreshold: r.HasTTFTThr, Span: m.ctx.Window,
		Width: cw, Height: h, Title: "TTFT", Strip: strip}
	tpot = chart.Line{Values: r.TPOT, Unit: unit, Threshold: r.TPOTThr, HasThreshold: r.HasTPOTThr, Span: m.ctx.Window,
		Width: cw, Height: h, Title: "TPOT", Strip: strip}
	return ttft, tpot
}

func (m *Model) drawCharts(ttft, tpot chart.Line, h int) string {
	cw := m.chartWidth()
	left := strings.Split(ttft.Render(m.ctx.Glyphs, m.ctx.Styles), "\n")
	right := strings.Split(tpot.Render(m.ctx.Glyphs, m.ctx.Styles), "\n")
	out := make([]string, h)
	for i := range out {
		l, rt := "", ""
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			rt = right[i]
		}
		out[i] = common.Cut(" "+common.PadTo(l, cw)+" "+common.PadTo(rt, cw), m.width)
	}
	return strings.Join(out, "\n")
}

func (m *Model) spark(r *Row, p placed, roles *themes.Roles) string {
	vals, thr, has := r.TTFT, r.TTFTThr, r.HasTTFTThr
	if p.col == ColTPOTSpark {
		vals, thr, has = r.TPOT, r.TPOTThr, r.HasTPOTThr
	}
	s := chart.Spark(chart.Resample(vals, p.width), thr, has, m.ctx.Glyphs.Spark, roles)
	if s == "" {
		return roles.Text.S(common.Spaces(p.width))
	}
	return s
}
