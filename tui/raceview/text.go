package raceview

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// seg is a run of text of one part on one line.
type seg struct {
	part Part
	text string
}

// mark is how the start of a tool call shows in the text.
const toolMark = "⟨tool⟩ "

// textBox holds a racer's text wrapped at a width, appended to as chunks
// arrive: a chunk only touches the last lines, so a frame differs from
// the previous one only where text was added.
type textBox struct {
	width int
	all   []seg // everything, to wrap again at another width
	lines [][]seg
	cur   int  // cells used on the last line
	tool  bool // the last text was a tool call
}

func (b *textBox) reset(width int) {
	*b = textBox{width: max(width, 1)}
	b.lines = [][]seg{nil}
}

func (b *textBox) resize(width int) {
	all := b.all
	b.reset(width)
	for _, s := range all {
		b.add(s.part, s.text)
	}
}

// addChunk appends a chunk, marking where each tool call starts.
func (b *textBox) addChunk(part Part, text string) {
	if part == Tool && !b.tool {
		b.add(Tool, toolMark)
	}
	b.tool = part == Tool
	b.add(part, text)
}

func (b *textBox) add(part Part, text string) {
	if text == "" {
		return
	}
	if n := len(b.all); n > 0 && b.all[n-1].part == part {
		b.all[n-1].text += text
	} else {
		b.all = append(b.all, seg{part, text})
	}
	var run strings.Builder
	flush := func() {
		if run.Len() == 0 {
			return
		}
		last := &b.lines[len(b.lines)-1]
		if n := len(*last); n > 0 && (*last)[n-1].part == part {
			(*last)[n-1].text += run.String()
		} else {
			*last = append(*last, seg{part, run.String()})
		}
		run.Reset()
	}
	newline := func() {
		flush()
		b.lines = append(b.lines, nil)
		b.cur = 0
	}
	for _, r := range text {
		if r == '\n' {
			newline()
			continue
		}
		w := 1
		if r >= utf8.RuneSelf {
			w = ansi.StringWidth(string(r))
		}
		if b.cur+w > b.width {
			newline()
		}
		run.WriteRune(r)
		b.cur += w
	}
	flush()
}

// page is the lines to show in h rows. The view does not scroll line by
// line (every row would be drawn again for each new line): when the box
// is full it turns a page, keeping the last rows for context, so between
// page turns only the last line changes.
func (b *textBox) page(h int) [][]seg {
	if h <= 0 {
		return nil
	}
	keep := min(2, h/3)
	top := 0
	for len(b.lines)-top > h {
		top += h - keep
	}
	return b.lines[top:]
}
