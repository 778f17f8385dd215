package table

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
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

// TTFT sorts by p99, the figure its header's arrow marks, not by the
// p50 shown first.
func TestTTFTSortsByTheMarkedP99(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(name string, p50, p99 float64) Row {
		return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: name},
			Signals: map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.TTFT: {State: telemetry.Live, P50: f(p50), P99: f(p99), Unit: "s"}}}}
	}
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 2)
	m.SetRows([]Row{row("steady", 0.050, 0.060), row("tail", 0.010, 0.900)})
	for m.sortCol != ColTTFT {
		m.CycleSort()
	}
	if sel, _ := m.Selected(); m.rows[0].Name() != "tail" {
		t.Errorf("TTFT worst first: %s first (selected %s), want tail (p99 900ms)", m.rows[0].Name(), sel.Name())
	}
	if head := ansi.Strip(m.header()); !strings.Contains(head, "TTFT p50/▼p99") {
		t.Errorf("header %q does not mark p99", head)
	}
}

// MBU measured from the engine's bytes counter is not called an
// estimate: neither the column title nor its cell carries "~"; an
// estimated MBU (weights and KV over the step time) does (QA5 #9).
func TestMBUMarkedEstimateOnlyWhenEstimated(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(name string, mbu float64, approx bool) Row {
		return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: name},
			Signals: map[telemetry.Signal]telemetry.SignalSnapshot{telemetry.MBU: {State: telemetry.Live, Value: f(mbu), Unit: "%", Approx: approx}}}}
	}
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(200, 10)
	m.SetRows([]Row{row("measured", 16, false), row("estimated", 23, true)})
	if head := ansi.Strip(m.header()); !strings.Contains(head, "MBU") || strings.Contains(head, "MBU~") {
		t.Errorf("header %q: want MBU without ~", head)
	}
	for _, line := range strings.Split(ansi.Strip(m.View()), "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "measured") && (!strings.Contains(line, "16%") || strings.Contains(line, "~16%")):
			t.Errorf("measured MBU row %q: want 16%% without ~", line)
		case strings.HasPrefix(strings.TrimSpace(line), "estimated") && !strings.Contains(line, "~23%"):
			t.Errorf("estimated MBU row %q: want ~23%%", line)
		}
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "measured") || !strings.Contains(v, "estimated") {
		t.Fatalf("rows missing:\n%s", v)
	}
}
