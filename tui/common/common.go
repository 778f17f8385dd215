// Package common is the state every pane of the UI reads (gh-dash's
// ProgramContext): theme, glyphs, the time of the shown data and the
// window. The root model owns it; panes get a pointer and never write it.
package common

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/format"
)

// Context is shared, read-only for panes.
type Context struct {
	Styles *themes.Styles
	Glyphs themes.Glyphs
	// Now is the time the shown snapshot was taken (frozen time while
	// frozen), so ages and durations agree with the figures.
	Now     time.Time
	Window  time.Duration
	Refresh time.Duration
}

// Paint returns the paint for a cell kind.
func (c *Context) Paint(r *themes.Roles, k format.Kind) themes.Paint {
	switch k {
	case format.Stale:
		return r.Stale
	case format.Error:
		return r.Bad
	case format.NoData:
		return r.NoData
	case format.Unknown:
		return r.Faint
	case format.OK:
		return r.OK
	case format.Warn:
		return r.Warn
	}
	return r.Text
}

// Safe makes text from the network inert (sources sanitise already; this
// is the second line of defence: the UI never lets text act as escapes).
func Safe(s string) string { return sanitize.Capped(s, 0) }

// Width is the display width of plain text; printable ASCII (most of a
// frame) skips grapheme segmentation, which dominated the frame cost.
func Width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// Fit pads or cuts plain text s to exactly w cells, marking a cut with
// ellipsis.
func Fit(s string, w int, ellipsis string) string {
	if w <= 0 {
		return ""
	}
	sw := Width(s)
	switch {
	case sw == w:
		return s
	case sw < w:
		return s + spaces(w-sw)
	}
	return ansi.Truncate(s, w, ellipsis)
}

// CutAtWord is plain text s within w cells: whole, or cut after its last
// whole word that fits and marked with ellipsis ("unknown since…", never
// "unknown sin…"); "" when not even the first word fits.
func CutAtWord(s string, w int, ellipsis string) string {
	if Width(s) <= w {
		return s
	}
	cut := ansi.Truncate(s, max(w-Width(ellipsis), 0), "")
	if rest := s[len(cut):]; !strings.HasPrefix(rest, " ") {
		i := strings.LastIndex(cut, " ")
		if i <= 0 {
			return ""
		}
		cut = cut[:i]
	}
	cut = strings.TrimRight(cut, " ,:;·(")
	if cut == "" {
		return ""
	}
	return cut + ellipsis
}

// FitMiddle fits plain text s in w cells, eliding the middle: names of
// one server share their head (host:port/org/) and differ at the tail
// (…-8B-Instruct vs …-70B-Instruct), so the tail is what must survive.
// A third of the cells keep the head, the rest the tail.
func FitMiddle(s string, w int, ellipsis string) string {
	sw := Width(s)
	ew := Width(ellipsis)
	if sw <= w || w <= ew+2 {
		return Fit(s, w, ellipsis)
	}
	head := (w - ew) / 3
	tail := w - ew - head
	rs := []rune(s)
	// Names are sanitised single-width text; cut by runes from each end.
	for Width(string(rs[len(rs)-tail:])) > tail {
		tail--
	}
	return string(rs[:head]) + ellipsis + string(rs[len(rs)-tail:]) + spaces(w-head-ew-Width(string(rs[len(rs)-tail:])))
}

// FitRight right-aligns plain text s in w cells.
func FitRight(s string, w int, ellipsis string) string {
	if w <= 0 {
		return ""
	}
	if sw := Width(s); sw < w {
		return spaces(w-sw) + s
	}
	return Fit(s, w, ellipsis)
}

// PaintedWidth is ansi.StringWidth of a painted line, with a fast path
// for printable ASCII between CSI sequences (SGR colours): most lines of a
// frame, whose grapheme segmentation otherwise dominated the live pane's
// cost. Anything else is measured by ansi.StringWidth.
func PaintedWidth(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			n++
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if !narrowRune(r) || (i+size < len(s) && s[i+size] >= 0x80 && !nextNarrow(s[i+size:])) {
				return ansi.StringWidth(s) // maybe wide, or a combining mark follows
			}
			n++
			i += size - 1
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			// CSI: parameter and intermediate bytes, then a final byte.
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] < 0x40 {
				j++
			}
			if j >= len(s) || s[j] < 0x40 || s[j] > 0x7e {
				return ansi.StringWidth(s)
			}
			i = j
		default:
			return ansi.StringWidth(s)
		}
	}
	return n
}

// narrowRune: r is one cell wherever it stands, with no grapheme rules
// to apply: the braille, box-drawing, block and arrow runes the charts
// and tables draw, general punctuation (…, ·) and Latin-1. Anything else
// goes the slow way.
func narrowRune(r rune) bool {
	switch {
	case r >= 0xa0 && r <= 0xff:
		return r != 0xad // soft hyphen
	case r >= 0x2010 && r <= 0x2027, r >= 0x2190 && r <= 0x21ff, r >= 0x2500 && r <= 0x25ff, r >= 0x2800 && r <= 0x28ff:
		return true
	}
	return false
}

// nextNarrow: the rune starting s is narrow (a mark that would join the
// previous rune is not).
func nextNarrow(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return narrowRune(r)
}

// Cut truncates a painted line to w cells.
func Cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if PaintedWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "")
}

const blanks = "                                                                                                                                "

func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blanks) {
		return blanks[:n]
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}

// Spaces returns n spaces.
func Spaces(n int) string { return spaces(n) }

// Clock formats a wall time for headers and alert starts.
func Clock(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.Format("15:04:05")
}

// FitWhole is Fit for a line of figures ("p50 12ms p99 485ms mean 98ms
// n=40 (17s of data)"): where it does not fit, whole parts go from the
// end (a parenthesised note as one, a label with its figure) so that no
// number is ever cut; only a first part too wide alone is cut.
func FitWhole(s string, w int, ellipsis string) string {
	for Width(s) > w {
		if strings.HasSuffix(s, ")") {
			if i := strings.LastIndex(s, " ("); i > 0 {
				s = s[:i]
				continue
			}
		}
		i := strings.LastIndex(s, " ")
		if i <= 0 {
			break
		}
		s = s[:i]
		// a label left without its figure goes with it
		for j := strings.LastIndex(s, " "); j > 0 && !strings.ContainsAny(s[j+1:], "0123456789"); j = strings.LastIndex(s, " ") {
			s = s[:j]
		}
	}
	return Fit(s, w, ellipsis)
}
