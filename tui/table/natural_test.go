package table

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

func TestNaturalCompare(t *testing.T) {
	in := []string{"m10", "m2", "m1", "m11", "h:8000/b", "gpu-10", "gpu-9", "m02", "h:800/a"}
	slices.SortFunc(in, NaturalCompare)
	want := []string{"gpu-9", "gpu-10", "h:800/a", "h:8000/b", "m1", "m2", "m02", "m10", "m11"}
	if !slices.Equal(in, want) {
		t.Errorf("got %v\nwant %v", in, want)
	}
}

// At 80 columns, endpoints of one server with long, similar model names
// stay distinguishable: names are elided in the middle, and MODEL (which
// would repeat the names) is left out.
func TestNamesDistinguishableAt80(t *testing.T) {
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: time.Now()}
	m := New(ctx)
	m.SetSize(80, 10)
	var rows []Row
	for _, model := range []string{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.2-3B-Instruct"} {
		rows = append(rows, Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "127.0.0.1:44431/" + model, Model: model}}})
	}
	m.SetRows(rows)
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	t.Log("\n" + strings.Join(lines, "\n"))
	if strings.Contains(lines[0], "MODEL") {
		t.Errorf("MODEL repeats the names: %q", lines[0])
	}
	seen := map[string]bool{}
	var rowLines []string
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && !strings.ContainsAny(l, "|│") {
			rowLines = append(rowLines, l) // not a row's chart strip
		}
	}
	if len(rowLines) != 3 {
		t.Fatalf("%d rows drawn, want 3", len(rowLines))
	}
	for _, l := range rowLines {
		name := strings.Fields(l)[0]
		if seen[name] {
			t.Errorf("two rows read %q:\n%s", name, strings.Join(lines, "\n"))
		}
		seen[name] = true
	}
}

// Few endpoints: each row gets its TTFT and TPOT charts; many: compact
// rows, one line each.
func TestRowsGrowWithTheTerminal(t *testing.T) {
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(true), Now: time.Now(), Window: time.Minute}
	mk := func(n int) []Row {
		var rows []Row
		for i := range n {
			vals := make([]float64, 64)
			for j := range vals {
				vals[j] = float64(10 + j%5)
			}
			rows = append(rows, Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "m" + strconv.Itoa(i)}},
				TTFT: vals, TPOT: vals})
		}
		return rows
	}
	m := New(ctx)
	m.SetSize(160, 45)
	m.SetRows(mk(3))
	if m.SeriesPoints() <= SparkWidth || !strings.Contains(ansi.Strip(m.View()), "now") {
		t.Errorf("3 endpoints at 160×45: want charts (%d points)\n%s", m.SeriesPoints(), ansi.Strip(m.View()))
	}
	if got := strings.Count(m.View(), "\n") + 1; got != 45 {
		t.Errorf("%d lines, want 45", got)
	}
	m.SetRows(mk(44))
	if m.SeriesPoints() != sparkWidth(m.cols) || strings.Contains(ansi.Strip(m.View()), "│") {
		t.Errorf("44 endpoints in 45 lines: want compact rows")
	}
	// 30 compact rows leave 14 lines: the first 14 rows get a one-line
	// strip each (TTFT and TPOT, an axis each) under their sparklines, and
	// no line stays blank.
	m.SetRows(mk(30))
	v := ansi.Strip(m.View())
	if got := strings.Count(v, "|"); got != 2*14 || strings.Contains(v, "\n\n") || m.SeriesPoints() == sparkWidth(m.cols) {
		t.Errorf("30 endpoints in 45 lines: want 14 strips (%d), no blank line, chart points (%d):\n%s", got, m.SeriesPoints(), v)
	}
}
