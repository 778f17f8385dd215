package common

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestPaintedWidthMatchesAnsi(t *testing.T) {
	for _, s := range []string{
		"", "abc", " \x1b[38;5;2mok\x1b[m rest", "\x1b[1;31mFAIL\x1b[0m", "\x1b[", "\x1b[31", "\x1b]8;;x\x07link\x1b]8;;\x07",
		"x\x1b[?25ly", "tab\there", "del\x7f", "· dot", "⠁⠂ braille", "全角", "e\u0301", "\x1b[38;2;1;2;3m\x1b[48;5;4mab\x1b[m",
		"\x1bc", "\x1b[31m\x1b", "line\nnext", "⣀⠤⠒⠉ ╌╌ │└─ ▲▼ ▁▂█ ←→ é ×", "⠁\u0301", "│\ufe0f", "a\u00adb", "✖ err", "·全",
		"\x1b[38;5;2m⣀⣀\x1b[m⠤", "…e\u0301",
	} {
		if got, want := PaintedWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("PaintedWidth(%q) = %d, ansi.StringWidth = %d", s, got, want)
		}
	}
}
