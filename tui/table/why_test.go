package table

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// A wide table says each row's leading cause in a WHY column (+N when
// more are named; blank when healthy); a narrower one (125 columns) leaves the column out
// rather than squeeze the names (the line under the table says it there).
func TestWhyColumnNamesTheLeadingCause(t *testing.T) {
	rows := []Row{
		{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "sick"}},
			Cause: &diagnosis.Finding{Cause: diagnosis.KVCache, Summary: "KV cache full: preempting"}, MoreCauses: 1},
		{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: "well"}}},
	}
	view := func(width int) string {
		m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
		m.SetSize(width, 10)
		m.SetRows(rows)
		return ansi.Strip(m.View())
	}
	wide := view(160)
	line := func(s, name string) string {
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) > 0 && strings.TrimPrefix(f[0], "▸") == name {
				return l
			}
		}
		return ""
	}
	if !strings.Contains(wide, " WHY") || !strings.HasSuffix(strings.TrimRight(line(wide, "sick"), " "), "kv_cache+1") {
		t.Errorf("160 columns: no WHY column naming kv_cache+1:\n%s", wide)
	}
	if well := strings.TrimRight(line(wide, "well"), " "); strings.Contains(well, "none") || strings.Contains(well, "kv_cache") {
		t.Errorf("160 columns: the healthy row names a cause: %q", well)
	}
	if narrow := view(125); strings.Contains(narrow, "WHY") || strings.Contains(narrow, "kv_cache") {
		t.Errorf("125 columns: WHY squeezes the names:\n%s", narrow)
	}
}
