// Package chart draws tokentop's small charts as text: sparklines, braille
// (or ASCII) line charts with an SLO threshold and breach shading, and
// horizontal bars. ntcharts/v2 cannot be linked without adding
// bubblezone/v2 to go.mod, and these renderers also avoid its pitfalls
// (panics at zero width, an auto-range that only grows, one SGR per
// cell): every size is clamped, the scale is recomputed from the visible
// data each frame, and paint is emitted once per run of same-styled cells.
package chart

import (
	"strings"

	"github.com/tokentop/tokentop/themes"
)

// line accumulates one row of text, emitting one SGR pair per run.
type line struct {
	b   strings.Builder
	seg strings.Builder
	cur themes.Paint
}

func (l *line) add(s string, p themes.Paint) {
	if p != l.cur {
		l.flush()
		l.cur = p
	}
	l.seg.WriteString(s)
}

func (l *line) addRune(r rune, p themes.Paint) {
	if p != l.cur {
		l.flush()
		l.cur = p
	}
	l.seg.WriteRune(r)
}

func (l *line) flush() {
	if l.seg.Len() > 0 {
		l.b.WriteString(l.cur.S(l.seg.String()))
		l.seg.Reset()
	}
}

func (l *line) String() string {
	l.flush()
	return l.b.String()
}

func clampMin(v, lo int) int {
	if v < lo {
		return lo
	}
	return v
}
