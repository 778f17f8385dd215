package table

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func typeKeys(f *Filter, s string) {
	for _, r := range s {
		f.Key(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func TestFilterEditing(t *testing.T) {
	var f Filter // the zero value works
	if f.Editing() || f.Active() || f.Value() != "" {
		t.Fatal("zero filter must be idle and empty")
	}
	f.Start()
	typeKeys(&f, "qwen")
	f.Key(tea.KeyPressMsg{Code: tea.KeyLeft})
	f.Key(tea.KeyPressMsg{Code: tea.KeyLeft})
	typeKeys(&f, "X") // inserted at the cursor
	if got := f.Value(); got != "qwXen" {
		t.Fatalf("value = %q", got)
	}
	if !f.Key(tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}) || f.Value() != "en" {
		t.Fatalf("ctrl+w deletes the word before the cursor: %q", f.Value())
	}
	if f.Key(tea.KeyPressMsg{Code: 'v', Mod: tea.ModCtrl}) {
		t.Fatal("ctrl+v must not read the clipboard")
	}
	f.Key(tea.KeyPressMsg{Code: tea.KeyEnter})
	if f.Editing() || f.Value() != "en" {
		t.Fatal("enter keeps the value and leaves the input")
	}
	f.Start()
	f.Key(tea.KeyPressMsg{Code: tea.KeyEscape})
	if f.Editing() || f.Active() {
		t.Fatal("esc clears and leaves")
	}
}

func TestFilterPasteIsSanitisedAndCapped(t *testing.T) {
	var f Filter
	f.Start()
	f.Paste("a\x1b[31mb\u202ec\u200bd\te")
	if got := f.Value(); got != "a[31mbcd e" {
		t.Fatalf("value = %q", got)
	}
	f.Paste(strings.Repeat("x", 200))
	if n := len([]rune(f.Value())); n != maxFilter {
		t.Fatalf("length %d, want the cap %d", n, maxFilter)
	}
	for _, w := range []int{-3, 0, 1, 2, 10, 80} {
		if v := f.View(w); ansi.StringWidth(v) > max(w, 2) {
			t.Errorf("View(%d) is %d wide: %q", w, ansi.StringWidth(v), ansi.Strip(v))
		}
	}
}
