package chart

import (
	"math"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/NimbleMarkets/ntcharts/v2/canvas"
	"github.com/NimbleMarkets/ntcharts/v2/sparkline"

	"github.com/ttftop/ttftop/themes"
)

// The benchmarks compare Spark and Line (ntcharts draws, this package
// writes the canvas out one SGR pair per run) with ntcharts' own
// canvas.View(), which renders every cell through its lipgloss style:
// the measured reason for not using it (see doc.go).

func benchVals(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 100 + 80*math.Sin(float64(i)/7)
		if i%37 == 5 {
			v[i] = math.NaN()
		}
	}
	return v
}

func darkStyles() *themes.Styles {
	return themes.NewStyles(themes.Default())
}

var sink string

// BenchmarkSpark8 is one table sparkline (8 cells) as the table draws it.
func BenchmarkSpark8(b *testing.B) {
	st, g, v := darkStyles(), themes.NewGlyphs(false), benchVals(8)
	b.ReportAllocs()
	for b.Loop() {
		sink = Spark(v, 150, true, g.Spark, &st.Normal)
	}
}

// BenchmarkSpark8CanvasView is the same sparkline written out by
// ntcharts' canvas.View(), breach cells restyled with SetCellStyle.
func BenchmarkSpark8CanvasView(b *testing.B) {
	v := benchVals(8)
	line := lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(117))
	bad := lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(203)).Bold(true)
	b.ReportAllocs()
	for b.Loop() {
		sl := sparkline.New(len(v), 1, sparkline.WithNoAutoMaxValue(), sparkline.WithMaxValue(200), sparkline.WithStyle(line))
		for _, x := range v {
			if finite(x) {
				sl.Push(x)
			} else {
				sl.Push(0)
			}
		}
		sl.Draw()
		for i, x := range v {
			if x > 150 {
				sl.Canvas.SetCellStyle(canvas.Point{X: i, Y: 0}, bad)
			}
		}
		sink = sl.View()
	}
}

func benchLine() Line {
	return Line{Values: benchVals(146), Unit: "ms", Threshold: 150, HasThreshold: true,
		Span: 5 * time.Minute, Width: 81, Height: 12}
}

// BenchmarkLine81x12 is one detail chart at 160 columns (two side by side).
func BenchmarkLine81x12(b *testing.B) {
	st, g, c := darkStyles(), themes.NewGlyphs(false), benchLine()
	b.ReportAllocs()
	for b.Loop() {
		sink = c.Render(g, st)
	}
}

// BenchmarkLine81x12CanvasView draws the same plot and writes the canvas
// out with canvas.View() (per-cell lipgloss), shading breach columns with
// per-cell background styles.
func BenchmarkLine81x12CanvasView(b *testing.B) {
	c := benchLine()
	labelW, axisW, pw, ph := layout(c.Width, c.Height, c.Strip)
	_, _ = labelW, axisW
	vals := Resample(c.Values, pw*2)
	hi := c.top(vals)
	line := lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(117))
	shade := lipgloss.NewStyle().Background(lipgloss.ANSIColor(52))
	b.ReportAllocs()
	for b.Loop() {
		lc, _, breached := c.plot(vals, pw, ph, 2, hi, false)
		cv := &lc.Canvas
		cv.SetStyle(line)
		for x, bad := range breached {
			if bad {
				for y := range ph {
					cv.SetCellStyle(canvas.Point{X: x, Y: y}, line.Background(shade.GetBackground()))
				}
			}
		}
		sink = cv.View()
		for y := range ph {
			for x := range pw {
				cv.SetCell(canvas.Point{X: x, Y: y}, canvas.Cell{})
			}
		}
		putLineChart(lc)
	}
}
