package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "llama-3-8b", "llama-3-8b"},
		{"osc title and csi", "llama\x1b]0;pwned\x07-8b\x1b[2J", `llama\x1b]0;pwned\x07-8b\x1b[2J`},
		{"carriage return", "ok\rFAKE", `ok\x0dFAKE`},
		{"c1 csi rune", "a\u009b31mb", `a\u009b31mb`},
		{"raw 0x9b byte", "a\x9b31m", "a?31m"},
		{"bidi override", "evil\u202egpj.exe", `evil\u202egpj.exe`},
		{"zero width", "a\u200bb", `a\u200bb`},
		{"backspace", "X\bY", `X\x08Y`},
		{"tab", "a\tb", "a b"},
		{"unicode kept", "日本語 ok", "日本語 ok"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("%s: Text(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestCappedKeepsRuneBoundary(t *testing.T) {
	got := Capped(strings.Repeat("é", 100), 11)
	if len(got) > 11 || !strings.HasSuffix(got, "…") {
		t.Fatalf("Capped = %q (len %d)", got, len(got))
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("cut inside a rune: %q", got)
	}
}

func TestMultilineKeepsNewlines(t *testing.T) {
	got := Multiline("line1\nline\x1b[31m2\r", 0)
	if want := "line1\nline\\x1b[31m2\\x0d"; got != want {
		t.Fatalf("Multiline = %q, want %q", got, want)
	}
}

// Head and Tail cut at rune boundaries: never a split UTF-8 sequence, and
// as much as fits.
func TestHeadAndTailCutOnRuneBoundaries(t *testing.T) {
	s := "ab€cd€" // € is 3 bytes: a b [€] c d [€] = 10 bytes
	for n, want := range map[int]string{0: "", 1: "a", 2: "ab", 3: "ab", 4: "ab", 5: "ab€", 9: "ab€cd", 10: s, 99: s, -1: ""} {
		if got := Head(s, n); got != want {
			t.Errorf("Head(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	for n, want := range map[int]string{0: "", 2: "", 3: "€", 4: "d€", 6: "cd€", 7: "cd€", 8: "€cd€", 10: s, 99: s, -1: ""} {
		if got := Tail(s, n); got != want {
			t.Errorf("Tail(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	for n := -1; n <= len(s)+1; n++ {
		if h, tl := Head(s, n), Tail(s, n); !utf8.ValidString(h) || !utf8.ValidString(tl) || len(h) > max(n, 0) || len(tl) > max(n, 0) {
			t.Errorf("n=%d: Head %q, Tail %q", n, h, tl)
		}
	}
}

// BenchmarkMultilinePlain is the per-token cost of sanitising streamed
// text (probe live text), which is almost always plain.
func BenchmarkMultilinePlain(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if Multiline(" tokens", 0) != " tokens" {
			b.Fatal("changed")
		}
	}
}
