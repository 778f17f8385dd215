package chart

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/v2/linechart"
	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/themes"
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
	// Title, when set, names the chart where the y labels leave room: on
	// the x axis's line, or on a strip's bottom line (for charts side by
	// side with no heading).
	Title string
	// Strip draws every line as plot, without the axis and time labels
	// (rows too short for them); charts under 3 lines always are strips.
	Strip bool
}

const yLabelWidth = 7

func layout(width, height int, strip bool) (labelW, axisW, pw, ph int) {
	width, height = clampMin(width, 1), clampMin(height, 1)
	if width >= 16 {
		labelW = yLabelWidth
	}
	if width >= 2 {
		axisW = 1
	}
	pw = clampMin(width-labelW-axisW, 1)
	ph = height
	if height >= 3 && !strip {
		ph = height - 2 // axis/breach strip + time labels
	}
	return labelW, axisW, pw, ph
}

func (c Line) strip() bool { return c.Strip || c.Height < 3 }

// Points is how many values Render draws for a chart width wide.
func Points(width int, ascii bool) int {
	_, _, pw, _ := layout(width, 3, false)
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

// Render draws the chart; it never panics whatever the size. The plot
// area is an ntcharts linechart (X = point index, Y = value, no ntcharts
// axes): braille through its canvas/graph BrailleGrid, or in ASCII mode
// its rune lines with '|' joins and '*' points. The y labels, the x axis
// that doubles as the breach strip and the time labels are drawn here, as
// text around it.
func (c Line) Render(g themes.Glyphs, st *themes.Styles) string {
	labelW, axisW, pw, ph := layout(c.Width, c.Height, c.Strip)
	perCell := 2
	if g.ASCII {
		perCell = 1
	}
	vals := Resample(c.Values, pw*perCell)
	hi := c.top(vals)
	// Without one value the chart has no scale to state (a blank chart
	// over "1ms … 0" would read as measured near zero).
	scaled := slices.ContainsFunc(vals, finite) || (c.HasThreshold && c.Threshold <= hi)
	lc, threshRow, breached := c.plot(vals, pw, ph, perCell, hi, g.ASCII)
	defer putLineChart(lc)
	cv := &lc.Canvas

	rows := make([]string, 0, ph+2)
	for r := 0; r < ph; r++ {
		var l line
		if labelW > 0 {
			lbl, p := "", st.Normal.Faint
			switch {
			case r == threshRow:
				lbl, p = figures.Value(c.Threshold, c.Unit), st.Normal.Thresh
			case r == 0 && scaled:
				lbl = figures.Value(hi, c.Unit)
			case r == ph-1 && c.Title != "" && c.strip() && ph >= 2:
				lbl = c.Title
			case r == ph-1 && scaled:
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
			at := canvas.Point{X: x, Y: r}
			cell := cv.Cell(at).Rune
			if cell != runes.Null {
				cv.SetCell(at, canvas.Cell{}) // leave the pooled canvas blank
			}
			switch {
			case cell != runes.Null && cell != runes.BrailleBlockOffset:
				l.addRune(cell, linePaint(roles, breached[x]))
			case r == threshRow:
				l.add(g.ThreshLine, roles.Thresh)
			default:
				l.addRune(' ', roles.Text)
			}
		}
		rows = append(rows, l.String())
	}
	if !c.strip() && axisW > 0 {
		rows = append(rows, axis(labelW, c.Title, pw, breached, g, st), timeLabels(labelW, pw, c.Span))
	}
	return strings.Join(rows, "\n")
}

func linePaint(r *themes.Roles, bad bool) themes.Paint {
	if bad {
		return r.Bad
	}
	return r.Line
}

// plot draws vals on an ntcharts linechart pw×ph cells over 0…hi and
// returns it (from the pool: give it back blank), the cell row of the threshold (-1: none or off
// scale) and the cell columns holding a value above the threshold. A NaN
// breaks the line: no segment is drawn across it.
func (c Line) plot(vals []float64, pw, ph, perCell int, hi float64, ascii bool) (*linechart.Model, int, []bool) {
	lc := getLineChart(pw, ph, float64(max(len(vals)-1, 1)), hi)
	// One braille grid for the whole series (linechart.DrawBrailleLine
	// would allocate and scan a grid per segment).
	bg := graph.NewBrailleGrid(lc.GraphWidth(), lc.GraphHeight(), lc.MinX(), lc.MaxX(), lc.MinY(), lc.MaxY())
	breached := make([]bool, pw)
	pt := func(x int, v float64) canvas.Float64Point {
		return canvas.Float64Point{X: float64(x), Y: min(max(v, 0), hi)}
	}
	var prev canvas.Float64Point
	havePrev, prevX, gap := false, 0, JoinGap(vals)
	for x, v := range vals {
		if !finite(v) {
			continue
		}
		if havePrev && x-prevX > gap {
			havePrev = false // a real gap: the data stopped, and it shows
		}
		prevX = x
		if c.HasThreshold && v > c.Threshold {
			breached[min(x/perCell, pw-1)] = true
		}
		f := pt(x, v)
		from := f
		if havePrev {
			from = prev
		}
		if ascii {
			if havePrev {
				lc.DrawRuneLine(from, f, '|')
			}
		} else {
			for _, p := range graph.GetLinePoints(bg.GridPoint(from), bg.GridPoint(f)) {
				bg.Set(p)
			}
		}
		prev, havePrev = f, true
	}
	if ascii {
		// points last, so a join never hides one
		for x, v := range vals {
			if finite(v) {
				lc.DrawRune(pt(x, v), '*')
			}
		}
	} else {
		graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{}, bg.BraillePatterns(), lc.Style)
	}
	threshRow := -1
	if c.HasThreshold && c.Threshold <= hi {
		f := pt(0, c.Threshold)
		if ascii {
			threshRow = canvas.CanvasPointFromFloat64Point(lc.Origin(), lc.ScaleFloat64Point(f)).Y
		} else {
			threshRow = bg.GridPoint(f).Y / 4
		}
		threshRow = min(max(threshRow, 0), ph-1)
	}
	return lc, threshRow, breached
}

// JoinGap is how far apart (in points) two values may be and still be
// joined by a line: sparse data (a probe every 8 s on 1 s bins) is a line
// through its points, not scattered dots, while a hole several times the
// usual spacing (probes failing, a source down) stays a visible gap. It
// is twice the median spacing of the finite points, at least 1.
func JoinGap(vals []float64) int {
	var gaps []int
	last := -1
	for x, v := range vals {
		if !finite(v) {
			continue
		}
		if last >= 0 {
			gaps = append(gaps, x-last)
		}
		last = x
	}
	if len(gaps) == 0 {
		return 1
	}
	slices.Sort(gaps)
	return max(2*gaps[len(gaps)/2], 1)
}

// lineCharts pools linecharts by size: a new one allocates a canvas of
// lipgloss-styled cells (~0.5 MB at 81×10), and Canvas.Clear allocates
// them again, so Render blanks the cells it drew instead.
var lineCharts sync.Map // [2]int{w, h} → *sync.Pool of *linechart.Model

func getLineChart(w, h int, maxX, maxY float64) *linechart.Model {
	key := [2]int{w, h}
	p, ok := lineCharts.Load(key)
	if !ok {
		p, _ = lineCharts.LoadOrStore(key, &sync.Pool{New: func() any {
			lc := linechart.New(w, h, 0, 1, 0, 1, linechart.WithXYSteps(0, 0))
			return &lc
		}})
	}
	lc := p.(*sync.Pool).Get().(*linechart.Model)
	// The scale is set from the visible data every time (ntcharts'
	// auto-range only grows).
	lc.SetXYRange(0, maxX, 0, maxY)
	lc.SetViewXYRange(0, maxX, 0, maxY)
	return lc
}

func putLineChart(lc *linechart.Model) {
	if p, ok := lineCharts.Load([2]int{lc.Width(), lc.Height()}); ok {
		p.(*sync.Pool).Put(lc)
	}
}

// axis is the x axis; it doubles as the breach strip so a breach reads
// without colour (mono, NO_COLOR).
func axis(labelW int, title string, pw int, breached []bool, g themes.Glyphs, st *themes.Styles) string {
	var l line
	if title != "" && labelW > 1 {
		l.add(padLeft(title, labelW-1)+" ", st.Normal.Faint)
	} else {
		l.add(strings.Repeat(" ", labelW), st.Normal.Text)
	}
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
		left := "-" + figures.Window(span)
		if len(left)+4 <= pw {
			put(0, left)
		}
		if mid := "-" + figures.Window(span/2); pw >= 3*len(mid)+8 {
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
