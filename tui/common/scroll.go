package common

import (
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/themes"
)

// Scroller shows a window of pre-rendered lines (detail and help views):
// content taller than the screen scrolls instead of being cut.
type Scroller struct {
	lines  []string
	offset int
	height int
}

// SetLines replaces the content, keeping the offset where possible.
func (s *Scroller) SetLines(lines []string) { s.lines = lines; s.clamp() }

// SetHeight sets the visible height.
func (s *Scroller) SetHeight(h int) { s.height = max(h, 0); s.clamp() }

// Scroll moves by d lines.
func (s *Scroller) Scroll(d int) { s.offset += d; s.clamp() }

// Page moves by a screenful.
func (s *Scroller) Page(dir int) { s.Scroll(dir * max(s.height-1, 1)) }

// Home goes to the top.
func (s *Scroller) Home() { s.offset = 0 }

// End goes to the bottom.
func (s *Scroller) End() { s.offset = len(s.lines); s.clamp() }

func (s *Scroller) clamp() {
	s.offset = min(max(s.offset, 0), max(len(s.lines)-s.height, 0))
}

// View renders exactly height lines; when content is taller, the last
// line says which lines are shown, so nothing looks cut off silently.
func (s *Scroller) View(width int, faint themes.Paint) string {
	if s.height <= 0 || width <= 0 {
		return ""
	}
	s.clamp()
	end := min(s.offset+s.height, len(s.lines))
	out := make([]string, 0, s.height)
	out = append(out, s.lines[s.offset:end]...)
	if len(s.lines) > s.height && len(out) > 0 {
		out[len(out)-1] = faint.S(FitRight("lines "+strconv.Itoa(s.offset+1)+"-"+strconv.Itoa(end)+
			" of "+strconv.Itoa(len(s.lines))+" (j/k, pgup/pgdn) ", width, ""))
	}
	for len(out) < s.height {
		out = append(out, "")
	}
	return strings.Join(out, "\n")
}
