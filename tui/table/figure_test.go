package table

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/tokentop/tokentop/telemetry"
	"github.com/tokentop/tokentop/themes"
	"github.com/tokentop/tokentop/tui/common"
)

// A figure too wide for its cell is shortened without losing a number:
// a pair in one unit says it once, "no data" becomes n/d; what fits, or
// cannot be shortened so, is left as it is.
func TestShortFigure(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"~31.7ms/31.8ms", 13, "~31.7/31.8ms"},
		{"31.7ms/31.8ms", 13, "31.7ms/31.8ms"},
		{"~999ms/1.08s", 11, "~999ms/1.08s"},
		{"no data", 5, "n/d"},
		{"no data", 7, "no data"},
		{"~46%", 5, "~46%"},
	} {
		if got := shortFigure(c.in, c.width); got != c.want {
			t.Errorf("shortFigure(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// An empty table's column header has no sparkline titles: with nothing
// under them "ttft" and "tpot" read as placeholders.
func TestEmptyHeaderHasNoSparkTitles(t *testing.T) {
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 2) // compact rows: sparkline columns placed
	m.SetRows(nil)
	head := ansi.Strip(m.header())
	if !strings.Contains(head, "TTFT p50/p99") || strings.Contains(head, "ttft") || strings.Contains(head, "tpot") {
		t.Errorf("empty header %q", head)
	}
	m.SetRows([]Row{{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "a"}}}})
	if head := ansi.Strip(m.header()); !strings.Contains(head, "ttft") {
		t.Errorf("header with a row lost its sparkline title: %q", head)
	}
}
