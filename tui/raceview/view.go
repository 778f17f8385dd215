package raceview

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/tui/common"
)

// SGR attributes, each closed by its own reset so spans nest.
const (
	faintOn, faintOff = "\x1b[2m", "\x1b[22m"
	boldOn, boldOff   = "\x1b[1m", "\x1b[22m"
	toolOn, toolOff   = "\x1b[36m", "\x1b[39m"
	badOn, badOff     = "\x1b[31m", "\x1b[39m"
	goodOn, goodOff   = "\x1b[32m", "\x1b[39m"
	revOn, revOff     = "\x1b[7m", "\x1b[27m"
)

// Columns need this many cells per racer; below it lanes are bands, one
// above the other.
const minColumn = 40

const ellipsis = "…"

// layout is where the lanes go.
type layout struct {
	columns   bool
	laneW     int // cells per lane
	laneH     int // rows per lane
	textWidth int
}

func (m *Model) footerRows() int {
	rows := 1 // keys
	if m.ended != nil {
		rows += len(m.lanes)
	}
	if m.summary != "" {
		rows += strings.Count(m.summary, "\n") + 1
	}
	return rows
}

func (m *Model) layout() layout {
	n := max(len(m.lanes), 1)
	area := max(m.height-2-m.footerRows(), 0) // header and status rows
	if w := (m.width - 3*(n-1)) / n; w >= minColumn {
		return layout{columns: true, laneW: w, laneH: area, textWidth: w}
	}
	return layout{laneW: m.width, laneH: area / n, textWidth: m.width}
}

func (m *Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	ly := m.layout()
	rows := []string{
		boldOn + common.Fit("ttftop race", 13, ellipsis) + boldOff + " " + common.Fit(m.opts.Title, max(m.width-14, 0), ellipsis),
		common.Fit(m.status(), m.width, ellipsis),
	}
	if ly.columns {
		cols := make([][]string, len(m.lanes))
		for i, l := range m.lanes {
			cols[i] = m.laneRows(l, ly.laneW, ly.laneH)
		}
		for r := range ly.laneH {
			parts := make([]string, len(cols))
			for i := range cols {
				parts[i] = cols[i][r]
			}
			rows = append(rows, strings.Join(parts, faintOn+" │ "+faintOff))
		}
	} else {
		for _, l := range m.lanes {
			rows = append(rows, m.laneRows(l, ly.laneW, ly.laneH)...)
		}
	}
	foot := m.footer()
	for len(rows)+len(foot) < m.height {
		rows = append(rows, "") // what the bands' division left over
	}
	rows = append(rows, foot...)
	if len(rows) > m.height {
		rows = rows[:m.height]
	}
	return strings.Join(rows, "\n")
}

func (m *Model) status() string {
	switch {
	case m.round == 0:
		return "warming the connections…"
	case m.ended == nil:
		return "round " + strconv.Itoa(m.round) + m.ofRounds() + ": racing — the same prompt sent to every racer at once, text drawn as each chunk arrives"
	}
	skew := m.ended.StartSkew
	s := "round " + strconv.Itoa(m.round) + m.ofRounds() + ": requests started " + ms(skew) + " apart (latest − earliest start, client clock)"
	if skew > time.Millisecond {
		s += " — more than 1 ms: a busy client"
	}
	return s
}

func (m *Model) ofRounds() string {
	if m.opts.Rounds > 1 {
		return " of " + strconv.Itoa(m.opts.Rounds)
	}
	return ""
}

// wideLane fits a lane's figures on one row.
const wideLane = 64

// figureLines is how many rows a lane's figures take at width w.
func figureLines(w int) int {
	if w >= wideLane {
		return 1
	}
	return 2
}

// laneRows is one lane: its title, its figures, then its text, h rows of
// exactly w cells.
func (m *Model) laneRows(l *lane, w, h int) []string {
	rows := make([]string, 0, h)
	title := revOn + " " + l.Label + " " + revOff + " " + boldOn + common.FitMiddle(l.Name, max(w-4, 0), ellipsis) + boldOff
	rows = append(rows, title)
	fr := figureLines(w)
	rows = append(rows, figureRows(l.fig, w, fr)...)
	for _, line := range l.box.page(max(h-1-fr, 0)) {
		rows = append(rows, paint(line, w))
	}
	for len(rows) < h {
		rows = append(rows, common.Spaces(w))
	}
	return rows[:h]
}

// figures are a lane's live fields: elapsed, the TTFT mark, tokens,
// tok/s now and TPOT so far; at the end the probe's figures.
func (m *Model) figures(l *lane, now time.Duration) []string {
	if d := l.done; d != nil {
		if !d.OK {
			return []string{badOn + "✗ failed " + common.Safe(d.Err) + badOff}
		}
		s := goodOn + "✓" + goodOff
		if l.pos > 0 {
			s += " " + boldOn + ordinal(l.pos) + boldOff
		}
		return []string{s, "E2E " + ms(d.E2E), "TTFT " + ms(d.TTFT), "TPOT " + tpotText(d.TPOT, d.HasTPOT), tokensText(d.Tokens, d.Approx) + " tok"}
	}
	if m.round == 0 {
		return []string{faintOn + "ready" + faintOff}
	}
	elapsed := strconv.FormatFloat(now.Seconds(), 'f', 1, 64) + "s"
	if !l.started {
		return []string{elapsed, "TTFT " + faintOn + "… waiting for the first token" + faintOff}
	}
	last := l.points[len(l.points)-1]
	f := []string{elapsed, "TTFT " + ms(l.ttft) + " " + goodOn + "●" + goodOff, strconv.Itoa(last.tokens) + " tok"}
	if r, ok := l.rateNow(now); ok {
		f = append(f, strconv.Itoa(int(r+0.5))+" tok/s now")
	}
	tpot, ok := l.tpotSoFar()
	return append(f, "TPOT "+tpotText(tpot, ok))
}

// figureRows packs the fields into rows of w cells, two spaces apart.
func figureRows(fields []string, w, rows int) []string {
	out := make([]string, 0, rows)
	line := ""
	for _, f := range fields {
		switch {
		case line == "":
			line = f
		case common.PaintedWidth(line)+2+common.PaintedWidth(f) <= w || len(out) == rows-1:
			line += "  " + f
		default:
			out = append(out, pad(line, w))
			line = f
		}
	}
	out = append(out, pad(line, w))
	for len(out) < rows {
		out = append(out, common.Spaces(w))
	}
	return out[:rows]
}

func tpotText(d time.Duration, ok bool) string {
	if !ok {
		return "—"
	}
	return ms(d)
}

// footer is the result (finish order, each racer's TTFT, TPOT and E2E and
// its difference from the winner), the rounds' summary and the keys.
func (m *Model) footer() []string {
	var rows []string
	if m.ended != nil {
		rows = append(rows, m.result()...)
	}
	if m.summary != "" {
		for _, s := range strings.Split(m.summary, "\n") {
			rows = append(rows, common.Fit(s, m.width, ellipsis))
		}
	}
	keys := "q quit"
	if m.opts.Over {
		keys = "esc back · " + keys
	}
	if m.opts.Again != nil {
		keys = "space race again · " + keys
	}
	return append(rows, faintOn+common.Fit(keys, m.width, ellipsis)+faintOff)
}

func (m *Model) result() []string {
	lanes := make([]Lane, len(m.lanes))
	fins := make([]*Finished, len(m.lanes))
	pos := make([]int, len(m.lanes))
	for i, l := range m.lanes {
		lanes[i], fins[i], pos[i] = l.Lane, l.done, l.pos
	}
	rows := Result(lanes, fins, pos)
	for i := range rows {
		rows[i] = common.Fit(rows[i], m.width, ellipsis)
	}
	return rows
}

// Result is a round's outcome as plain text, one line per racer in finish
// order: its position, E2E, TTFT and TPOT, each with its difference from
// the winner's; failed racers last.
func Result(lanes []Lane, fins []*Finished, positions []int) []string {
	order := make([]int, len(lanes))
	for i := range order {
		order[i] = i
	}
	rank := func(i int) int {
		if positions[i] == 0 || fins[i] == nil || !fins[i].OK {
			return len(lanes) + 1
		}
		return positions[i]
	}
	slices.SortStableFunc(order, func(a, b int) int { return rank(a) - rank(b) })
	var win *Finished
	if rank(order[0]) <= len(lanes) {
		win = fins[order[0]]
	}
	rows := make([]string, 0, len(order))
	for k, i := range order {
		head := "        "
		if k == 0 {
			head = "result: "
		}
		d := fins[i]
		if rank(i) > len(lanes) {
			why := "no result"
			if d != nil {
				why = d.Err
			}
			rows = append(rows, head+"—   "+lanes[i].Label+"  failed: "+common.Safe(why))
			continue
		}
		rows = append(rows, head+common.Fit(ordinal(positions[i]), 4, ellipsis)+lanes[i].Label+
			"  E2E "+ms(d.E2E)+diff(win, d, func(f *Finished) (time.Duration, bool) { return f.E2E, true })+
			"  TTFT "+ms(d.TTFT)+diff(win, d, func(f *Finished) (time.Duration, bool) { return f.TTFT, true })+
			"  TPOT "+tpotText(d.TPOT, d.HasTPOT)+diff(win, d, func(f *Finished) (time.Duration, bool) { return f.TPOT, f.HasTPOT })+
			"  "+tokensText(d.Tokens, d.Approx)+" tok")
	}
	return rows
}

// diff is " (+x)" of d's figure against the winner's; none for the winner.
func diff(win, d *Finished, f func(*Finished) (time.Duration, bool)) string {
	if win == nil || win == d {
		return ""
	}
	a, oka := f(win)
	b, okb := f(d)
	if !oka || !okb {
		return ""
	}
	sign := "+"
	if b < a {
		sign = "−"
	}
	delta := b - a
	if delta < 0 {
		delta = -delta
	}
	return " (" + sign + ms(delta) + ")"
}

// paint draws one wrapped line in its parts' styles, padded to w cells.
func paint(line []seg, w int) string {
	var b strings.Builder
	used := 0
	for _, s := range line {
		used += common.Width(s.text)
		switch s.part {
		case Reasoning:
			b.WriteString(faintOn + s.text + faintOff)
		case Tool:
			b.WriteString(toolOn + s.text + toolOff)
		default:
			b.WriteString(s.text)
		}
	}
	if used < w {
		b.WriteString(common.Spaces(w - used))
	}
	return b.String()
}

// pad fits a painted line to exactly w cells.
func pad(s string, w int) string {
	if n := common.PaintedWidth(s); n < w {
		return s + common.Spaces(w-n)
	}
	return ansi.Truncate(s, w, "")
}
