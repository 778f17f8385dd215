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

func groupRows(names ...string) []Row {
	var rows []Row
	for _, n := range names {
		rows = append(rows, Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: n, Engine: telemetry.EngineVLLM}}})
	}
	return rows
}

// Rows of one server stand under one header line that names it once;
// the cursor moves over rows only; a click on the header selects its
// first row; a lone server's row keeps its full name.
func TestServerGroups(t *testing.T) {
	ctx := &common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()}
	m := New(ctx)
	m.SetSize(100, 8) // 7 lines under the column header: compact rows, none to spare
	m.SetRows(groupRows("b:1/org/m-8B", "a:1/org/m-70B", "a:1/org/m-8B", "c:1/org/solo", "b:1/org/m-70B"))
	view := ansi.Strip(m.View())
	lines := strings.Split(view, "\n")
	want := []string{"a:1 · 2 endpoints", "org/m-8B", "org/m-70B", "b:1 · 2 endpoints", "org/m-8B", "org/m-70B", "c:1/org/solo"}
	for i, w := range want {
		if !strings.Contains(lines[1+i], w) {
			t.Fatalf("line %d: want %q in %q\n%s", 1+i, w, lines[1+i], view)
		}
	}
	if strings.Count(view, "a:1") != 1 || strings.Count(view, "b:1") != 1 {
		t.Errorf("a server is named once:\n%s", view)
	}
	if r, _ := m.Selected(); r.Name() != "a:1/org/m-8B" {
		t.Errorf("first row selected: %q", r.Name())
	}
	m.Move(2) // past the b:1 header, onto its first row
	if r, _ := m.Selected(); r.Name() != "b:1/org/m-8B" {
		t.Errorf("cursor moves over rows only: %q", r.Name())
	}
	if !m.Click(4) { // b:1's header line
		t.Fatal("a click on a server's line hits")
	}
	if r, _ := m.Selected(); r.Name() != "b:1/org/m-8B" {
		t.Errorf("a click on a server's line selects its first row: %q", r.Name())
	}
	m.SetSize(100, 4) // 3 lines: scrolling
	m.End()
	if v := ansi.Strip(m.View()); !strings.Contains(v, "c:1/org/solo") {
		t.Errorf("End shows the last row:\n%s", v)
	}
	m.Home()
	if v := ansi.Strip(m.View()); !strings.Contains(strings.Split(v, "\n")[1], "a:1 · 2 endpoints") {
		t.Errorf("Home shows the first row under its server's line:\n%s", v)
	}
}
