package common

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Columns lays painted blocks side by side, each padded or cut to its
// width, separated by gap spaces; the result is as tall as the tallest.
func Columns(blocks []string, widths []int, gap int) string {
	split := make([][]string, len(blocks))
	h := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		h = max(h, len(split[i]))
	}
	var out strings.Builder
	for y := 0; y < h; y++ {
		if y > 0 {
			out.WriteByte('\n')
		}
		for i := range blocks {
			if i > 0 {
				out.WriteString(spaces(gap))
			}
			line := ""
			if y < len(split[i]) {
				line = split[i][y]
			}
			out.WriteString(PadTo(line, widths[i]))
		}
	}
	return out.String()
}

// PadTo pads or cuts a painted line to exactly w cells.
func PadTo(line string, w int) string {
	if w <= 0 {
		return ""
	}
	lw := PaintedWidth(line)
	switch {
	case lw < w:
		return line + spaces(w-lw)
	case lw > w:
		return ansi.Truncate(line, w, "")
	}
	return line
}

// Lines splits s into lines, each cut to w cells.
func Lines(s string, w int) []string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = Cut(l, w)
	}
	return ls
}
