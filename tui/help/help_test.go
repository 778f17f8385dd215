package help

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/keys"
)

// columns splits term's lines back into the label and definition texts.
func columns(lines []string, lw int) (label, def string) {
	var ls, ds []string
	for _, l := range lines {
		l = ansi.Strip(l)
		ls = append(ls, strings.TrimSpace(ansi.Cut(l, 0, 1+lw)))
		ds = append(ds, strings.TrimSpace(ansi.Cut(l, 1+lw, ansi.StringWidth(l))))
	}
	return strings.Join(strings.Fields(strings.Join(ls, " ")), " "), strings.Join(strings.Fields(strings.Join(ds, " ")), " ")
}

// Every metric's label (with its unit) and definition are there whole at
// 80 and 160 columns: a label longer than its column wraps, nothing is
// cut.
func TestHelpTermsWrapNotCut(t *testing.T) {
	for _, w := range []int{80, 160} {
		m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: time.Now()}, keys.New(true))
		m.SetSize(w, 40)
		for _, sig := range telemetry.Signals {
			info := sig.Info()
			label := info.Title
			if info.Unit != "" {
				label += " (" + info.Unit + ")"
			}
			lines := m.term(label, info.Definition, 15)
			for _, l := range lines {
				if lw := ansi.StringWidth(l); lw > w {
					t.Errorf("%d cols: %q is %d wide", w, l, lw)
				}
			}
			gotL, gotD := columns(lines, 15)
			if gotL != label || gotD != strings.Join(strings.Fields(info.Definition), " ") {
				t.Errorf("%d cols: %s: label %q, definition %q", w, sig, gotL, gotD)
			}
		}
	}
}

// Section headings wrap at the width too, every word kept.
func TestHelpHeadingsWrapNotCut(t *testing.T) {
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: time.Now()}, keys.New(true))
	m.SetSize(80, 40)
	const title = " engine diagnosis (server figures: scrape, PromQL; the detail view's engine section)"
	lines := m.heading(title)
	var words []string
	for _, l := range lines {
		if lw := ansi.StringWidth(l); lw > 80 {
			t.Errorf("%q is %d wide", l, lw)
		}
		words = append(words, strings.Fields(ansi.Strip(l))...)
	}
	if got := strings.Join(words, " "); got != strings.TrimSpace(title) || len(lines) < 2 {
		t.Errorf("heading %q in %d lines, want every word of %q over 2+", got, len(lines), title)
	}
}

// Too narrow for the key groups side by side, every key's description
// starts in the same column.
func TestHelpKeysAlignedWhenNarrow(t *testing.T) {
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()}, keys.New(false))
	lines := m.keyColumns(80)
	if len(lines) < 10 {
		t.Fatalf("%d key lines", len(lines))
	}
	col := -1
	for _, l := range lines {
		l = ansi.Strip(l)
		fields := strings.Fields(l)
		at := ansi.StringWidth(l[:strings.Index(l, " "+fields[1])+1]) // where the description starts
		if col < 0 {
			col = at
		}
		if at != col {
			t.Errorf("description at %d, not %d: %q", at, col, l)
		}
	}
}

// At 80 and 160 columns no metric's or GPU term's name wraps: the label
// column is as wide as the section's widest name (QA5 #14: "requests" /
// "(req/s)" on two lines).
func TestHelpNamesOnOneLine(t *testing.T) {
	for _, w := range []int{80, 160} {
		m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()}, keys.New(false))
		m.SetSize(w, 40)
		lines := strings.Split(ansi.Strip(m.render()), "\n")
		for _, sig := range telemetry.Signals {
			info := sig.Info()
			label := info.Title
			if info.Unit != "" {
				label += " (" + info.Unit + ")"
			}
			found := false
			for _, l := range lines {
				if strings.HasPrefix(l, " "+label+" ") {
					found = true
				}
				if lw := ansi.StringWidth(l); lw > w {
					t.Errorf("%d cols: %q is %d wide", w, l, lw)
				}
			}
			if !found {
				t.Errorf("%d cols: %q not on one line", w, label)
			}
		}
	}
}
