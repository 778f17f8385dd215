package chart

import (
	"strings"

	"github.com/ttftop/ttftop/themes"
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
