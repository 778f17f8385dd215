package chart

import (
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/themes"
)

// Bar is one row of a horizontal bar chart.
type Bar struct {
	Label string
	Value float64
	Note  string // printed after the bar, e.g. "412 (38%)"
	Bad   bool   // painted as a breach (e.g. bucket above the SLO)
}

// Bars draws one bar per row, scaled to the largest value, at most width
// wide. Labels and notes are plain text.
func Bars(bars []Bar, width int, g themes.Glyphs, r *themes.Roles) string {
	if len(bars) == 0 {
		return ""
	}
	width = clampMin(width, 1)
	labelW, noteW, hi := 0, 0, 0.0
	for _, b := range bars {
		labelW = max(labelW, ansi.StringWidth(b.Label))
		noteW = max(noteW, ansi.StringWidth(b.Note))
		if finite(b.Value) {
			hi = max(hi, b.Value)
		}
	}
	barW := width - labelW - noteW - 2
	if barW < 4 {
		// Too narrow for bars: keep label and note, which carry the data.
		barW = 0
	}
	rows := make([]string, 0, len(bars))
	for _, b := range bars {
		var l line
		l.add(padRight(b.Label, labelW)+" ", r.Faint)
		if barW > 0 {
			half := 0
			if hi > 0 && finite(b.Value) {
				half = int(math.Round(b.Value / hi * float64(barW*2)))
			}
			fill := strings.Repeat(g.Bar, half/2)
			if half%2 == 1 {
				fill += g.HalfBar
			}
			p := r.Line
			if b.Bad {
				p = r.Bad
			}
			l.add(fill, p)
			l.add(strings.Repeat(" ", barW-ansi.StringWidth(fill)+1), r.Text)
		}
		l.add(b.Note, r.Text)
		rows = append(rows, ansi.Truncate(l.String(), width, ""))
	}
	return strings.Join(rows, "\n")
}

func padRight(s string, w int) string {
	if sw := ansi.StringWidth(s); sw < w {
		return s + strings.Repeat(" ", w-sw)
	} else if sw > w {
		return ansi.Truncate(s, w, "")
	}
	return s
}
