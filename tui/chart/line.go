package chart

import (
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/tokentop/tokentop/themes"
	"github.com/tokentop/tokentop/tui/format"
)

// Line is a time-series chart of one signal, drawn in braille (2×4 dots a
// cell) or, in ASCII mode, one point a cell.
type Line struct {
	// Values are oldest first, in display units; NaN is a gap.
	Values       []float64
	Unit         string
	Threshold    float64 // display units
	HasThreshold bool
	Span         time.Duration
	// Width and Height are the whole chart's, axes and labels included.
	Width, Height int
}

const yLabelWidth = 7

func layout(width, height int) (labelW, axisW, pw, ph int) {
	width, height = clampMin(width, 1), clampMin(height, 1)
	if width >= 16 {
		labelW = yLabelWidth
	}
	if width >= 2 {
		axisW = 1
	}
	pw = clampMin(width-labelW-axisW, 1)
	ph = height
	if height >= 3 {
		ph = height - 2 // axis/breach strip + time labels
	}
	return labelW, axisW, pw, ph
}

// Points is how many values Render draws for a chart width wide.
func Points(width int, ascii bool) int {
	_, _, pw, _ := layout(width, 3)
	if ascii {
		return pw
	}
	return 2 * pw
}

// niceCeil rounds x up to 1, 2, 2.5 or 5 × 10^k so axis labels are round.
func niceCeil(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// top is the y scale's top: the data's maximum, stretched to show the SLO
// threshold unless that would squash the data into the bottom quarter
// (then ThresholdOffScale reports it and the caller says so in words).
func (c Line) top(vals []float64) float64 {
	hi := 0.0
	for _, v := range vals {
		if finite(v) && v > hi {
			hi = v
		}
	}
	if c.HasThreshold && c.Threshold*1.2 > hi && (hi == 0 || c.Threshold*1.2 <= 4*hi) {
		hi = c.Threshold * 1.2
	}
	return niceCeil(hi)
}

// ThresholdOffScale reports whether the threshold lies above the chart.
func (c Line) ThresholdOffScale() bool {
	return c.HasThreshold && c.Threshold > c.top(c.Values)
}

// Render draws the chart; it never panics whatever the size.
func (c Line) Render(g themes.Glyphs, st *themes.Styles) string {
	labelW, axisW, pw, ph := layout(c.Width, c.Height)
	perCell := 2
	if g.ASCII {
		perCell = 1
	}
	vals := Resample(c.Values, pw*perCell)
	hi := c.top(vals)

	dotsY := ph * 4
	if g.ASCII {
		dotsY = ph
	}
	grid, breached := plot(vals, pw, perCell, dotsY, hi, c)
	threshRow := -1
	if c.HasThreshold && c.Threshold <= hi {
		threshRow = toDot(c.Threshold, hi, dotsY) * ph / dotsY
	}

	rows := make([]string, 0, ph+2)
	for r := 0; r < ph; r++ {
		var l line
		if labelW > 0 {
			lbl, p := "", st.Normal.Faint
			switch {
			case r == threshRow:
				lbl, p = format.Value(c.Threshold, c.Unit), st.Normal.Thresh
			case r == 0:
				lbl = format.Value(hi, c.Unit)
			case r == ph-1:
				lbl = "0"
			}
			l.add(padLeft(lbl, labelW-1)+" ", p)
		}
		if axisW > 0 {
			l.add(g.VLine, st.Normal.Faint)
		}
		for x := 0; x < pw; x++ {
			roles := &st.Normal
			if breached[x] && st.Breach != (themes.Paint{}) {
				roles = &st.Shaded
			}
			cell := grid[r*pw+x]
			switch {
			case cell != 0 && g.ASCII:
				l.add(string(rune(cell)), linePaint(roles, breached[x]))
			case cell != 0:
				l.addRune(rune(0x2800+int(cell)), linePaint(roles, breached[x]))
			case r == threshRow:
				l.add(g.ThreshLine, roles.Thresh)
			default:
				l.addRune(' ', roles.Text)
			}
		}
		rows = append(rows, l.String())
	}
	if c.Height >= 3 && axisW > 0 {
		rows = append(rows, axis(labelW, pw, breached, g, st), timeLabels(labelW, pw, c.Span))
	}
	return strings.Join(rows, "\n")
}

func linePaint(r *themes.Roles, bad bool) themes.Paint {
	if bad {
		return r.Bad
	}
	return r.Line
}

// toDot maps v to a dot row, 0 at the top.
func toDot(v, hi float64, dots int) int {
	y := dots - 1 - int(math.Round(v/hi*float64(dots-1)))
	return min(max(y, 0), dots-1)
}

// plot sets the dots (braille bits, or an ASCII rune) of every cell and
// marks the cell columns holding a value above the threshold.
func plot(vals []float64, pw, perCell, dotsY int, hi float64, c Line) ([]uint16, []bool) {
	ph := dotsY / 4
	if perCell == 1 {
		ph = dotsY
	}
	grid := make([]uint16, pw*ph)
	breached := make([]bool, pw)
	set := func(x, y int) {
		cx := x / perCell
		if perCell == 1 {
			if grid[y*pw+cx] == 0 {
				grid[y*pw+cx] = '|'
			}
			return
		}
		grid[(y/4)*pw+cx] |= brailleBit(x%2, y%4)
	}
	prev := -1
	for x, v := range vals {
		if !finite(v) {
			prev = -1
			continue
		}
		if c.HasThreshold && v > c.Threshold {
			breached[x/perCell] = true
		}
		y := toDot(v, hi, dotsY)
		if prev >= 0 {
			// join to the previous point so the line reads as one
			for yy := min(prev, y) + 1; yy < max(prev, y); yy++ {
				set(x, yy)
			}
		}
		set(x, y)
		if perCell == 1 {
			grid[y*pw+x] = '*'
		}
		prev = y
	}
	return grid, breached
}

func brailleBit(dx, dy int) uint16 {
	if dy == 3 {
		return 0x40 << dx
	}
	return 1 << (dy + 3*dx)
}

// axis is the x axis; it doubles as the breach strip so a breach reads
// without colour (mono, NO_COLOR).
func axis(labelW, pw int, breached []bool, g themes.Glyphs, st *themes.Styles) string {
	var l line
	l.add(strings.Repeat(" ", labelW), st.Normal.Text)
	l.add(g.Corner, st.Normal.Faint)
	for x := 0; x < pw; x++ {
		if breached[x] {
			l.add(g.BreachMark, st.Normal.Bad)
		} else {
			l.add(g.HLine, st.Normal.Faint)
		}
	}
	return l.String()
}

func timeLabels(labelW, pw int, span time.Duration) string {
	buf := []rune(strings.Repeat(" ", pw+1))
	put := func(at int, s string) {
		for i, r := range []rune(s) {
			if at+i >= 0 && at+i < len(buf) {
				buf[at+i] = r
			}
		}
	}
	if span > 0 {
		left := "-" + format.Window(span)
		if len(left)+4 <= pw {
			put(0, left)
		}
		if mid := "-" + format.Window(span/2); pw >= 3*len(mid)+8 {
			put(pw/2-len(mid)/2, mid)
		}
	}
	if pw+1 >= 3 {
		put(pw+1-3, "now")
	}
	return strings.Repeat(" ", labelW) + strings.TrimRight(string(buf), " ")
}

func padLeft(s string, w int) string {
	if sw := ansi.StringWidth(s); sw < w {
		return strings.Repeat(" ", w-sw) + s
	} else if sw > w {
		return ansi.Truncate(s, w, "")
	}
	return s
}
