// Package sanitize is the one place where untrusted text from the network
// (model ids, label values, error bodies, streamed tokens) is made safe to
// reach a terminal. Every source calls it once, where the string enters.
//
// charmbracelet/x/ansi.Strip is not enough: it keeps \r, \b and bidi
// overrides (CVE-2021-25743, CVE-2021-42574), so control and format runes
// are replaced by a visible escape instead of being dropped or kept.
package sanitize

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMax is the length cap, in bytes, for identifiers and error texts.
const DefaultMax = 512

// Text returns s made safe for a terminal and capped at DefaultMax bytes.
func Text(s string) string { return Capped(s, DefaultMax) }

// Capped is Text with an explicit byte cap (0 means no cap). A capped string
// ends with "…" so the cut is visible.
func Capped(s string, maxBytes int) string {
	if isPlain(s) && (maxBytes <= 0 || len(s) <= maxBytes) {
		return s // fast path: printable ASCII needs no work
	}
	s = strings.ToValidUTF8(s, "?") // a raw 0x9B byte is C1 CSI on 8-bit terminals
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			b.WriteString(escape(r))
		default:
			b.WriteRune(r)
		}
		if maxBytes > 0 && b.Len() > maxBytes {
			return truncate(b.String(), maxBytes)
		}
	}
	return b.String()
}

// Multiline is like Capped but keeps newlines, for streamed response text
// shown in a pane; every other control rune is escaped.
func Multiline(s string, maxBytes int) string {
	if isPlain(s) && (maxBytes <= 0 || len(s) <= maxBytes) {
		return s // fast path, as in Capped: streamed tokens are mostly plain
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Capped(p, 0)
	}
	out := strings.Join(parts, "\n")
	if maxBytes > 0 && len(out) > maxBytes {
		return truncate(out, maxBytes)
	}
	return out
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func escape(r rune) string {
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	default:
		return fmt.Sprintf(`\u%04x`, r)
	}
}

// truncate cuts s to at most maxBytes bytes on a rune boundary, marking the cut.
func truncate(s string, maxBytes int) string {
	const mark = "…"
	return Head(s, maxBytes-len(mark)) + mark
}

// Head is the longest prefix of s of at most maxBytes bytes that ends on a
// rune boundary, so a cut never splits a UTF-8 sequence.
func Head(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := max(maxBytes, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Tail is the longest suffix of s of at most maxBytes bytes that starts on
// a rune boundary.
func Tail(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	cut := len(s) - max(maxBytes, 0)
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:]
}
