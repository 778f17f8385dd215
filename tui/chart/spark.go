package chart

import (
	"math"
	"sync"

	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/v2/sparkline"

	"github.com/ttftop/ttftop/themes"
)

// sparkLevels is how many heights an ntcharts one-row sparkline column
// has: the eight lower block elements ▁…█.
const sparkLevels = 8

// Spark draws vals (one per cell, NaN = gap shown as a space) with an
// ntcharts sparkline one row high, on the scale sparkScale takes from
// the visible values each time (ntcharts' auto-max only grows, so one old
// spike that scrolled out would flatten the line forever). Every finite
// value draws at least the lowest block (a zero column draws nothing in
// ntcharts, and missing must never look like zero). Cells above the SLO
// threshold thr (when hasThr) are painted "bad"; the SLO badge says it
// in words. levels are the runes written for the eight heights (the
// Unicode blocks, or ASCII in --ascii mode).
func Spark(vals []float64, thr float64, hasThr bool, levels []rune, r *themes.Roles) string {
	if len(vals) == 0 || len(levels) == 0 {
		return ""
	}
	lo, hi := sparkScale(vals, thr, hasThr)
	sl := getSpark(len(vals))
	defer putSpark(sl)
	for _, v := range vals {
		if !finite(v) {
			sl.Push(0) // draws no column: a gap
			continue
		}
		i := int(math.Round((v - lo) / (hi - lo) * float64(sparkLevels-1)))
		i = min(max(i, 0), sparkLevels-1)
		sl.Push(float64(i+1) / sparkLevels)
	}
	sl.DrawColumnsOnly()
	var l line
	for x, v := range vals {
		c := sl.Canvas.Cell(canvas.Point{X: x, Y: 0})
		if c.Rune == runes.Null {
			l.addRune(' ', r.Line)
			continue
		}
		p := r.Line
		if hasThr && v > thr {
			p = r.Bad
		}
		l.addRune(levelRune(c.Rune, levels), p)
	}
	return l.String()
}

// sparkMinSpan is the least range a sparkline spans, as a share of its
// largest value: jitter of a percent stays a level or two, not the full
// height, while a series that moves by a tenth or more fills it.
const sparkMinSpan = 0.1

// sparkScale is the range a sparkline's eight levels span: the visible
// values' minimum to maximum, so a series that varies shows how (a
// floor at half the top, or the SLO far above, squashed 80 ± 10 ms
// into one flat level). The SLO threshold joins the range when it lies
// within the data's own span of it, so its distance reads without
// squashing the line; a range narrower than sparkMinSpan of the values
// is widened around its middle, so a truly constant series draws flat
// at mid height.
func sparkScale(vals []float64, thr float64, hasThr bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > hi {
		return 0, 1 // nothing finite: every cell is a gap
	}
	if span := hi - lo; hasThr && finite(thr) {
		switch {
		case thr > hi && thr-hi <= span:
			hi = thr
		case thr < lo && lo-thr <= span:
			lo = thr
		}
	}
	if minSpan := sparkMinSpan * math.Max(math.Abs(lo), math.Abs(hi)); hi-lo < minSpan {
		mid := (lo + hi) / 2
		lo, hi = mid-minSpan/2, mid+minSpan/2
		if minSpan == 0 { // all zeros
			lo, hi = 0, 1
		}
	}
	return lo, hi
}

// sparks pools one-row sparklines by width: a new one allocates a canvas
// of lipgloss-styled cells and a key map, ~15 KB, and the table draws two
// a row every frame.
var sparks sync.Map // width → *sync.Pool of *sparkline.Model

func getSpark(w int) *sparkline.Model {
	p, ok := sparks.Load(w)
	if !ok {
		p, _ = sparks.LoadOrStore(w, &sync.Pool{New: func() any {
			sl := sparkline.New(w, 1, sparkline.WithNoAutoMaxValue(), sparkline.WithMaxValue(1))
			return &sl
		}})
	}
	// No Clear: Spark pushes exactly w values, which overwrite the ring,
	// and DrawColumnsOnly clears the canvas.
	return p.(*sync.Pool).Get().(*sparkline.Model)
}

func putSpark(sl *sparkline.Model) {
	if p, ok := sparks.Load(sl.Width()); ok {
		p.(*sync.Pool).Put(sl)
	}
}

// levelRune maps an ntcharts column rune (▁ … █) to the same height in
// levels: ntcharts draws block elements only (graph.DrawColumnRune
// refuses any other rune), so ASCII mode swaps them here.
func levelRune(block rune, levels []rune) rune {
	i := int(block - runes.LowerBlockOne)
	i = min(max(i, 0), sparkLevels-1)
	return levels[i*(len(levels)-1)/(sparkLevels-1)]
}

// Resample returns vals stretched or squeezed to n points (nearest), for
// when the data was fetched at another width than the one drawn.
func Resample(vals []float64, n int) []float64 {
	if n <= 0 {
		return nil
	}
	if len(vals) == n {
		return vals
	}
	out := make([]float64, n)
	if len(vals) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	for i := range out {
		out[i] = vals[i*len(vals)/n]
	}
	return out
}
