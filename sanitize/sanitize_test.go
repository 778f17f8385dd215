package sanitize

import (
	"strings"
	"testing"
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
