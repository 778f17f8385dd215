package table

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// A server's data-parallel ranks fold under its row, which says how many;
// x lists them indented. They are not endpoints of their own: the counts,
// a down target included, count their server once.
func TestRankRows(t *testing.T) {
	down := telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetDown, Reason: "connection refused"})
	ep := func(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
	rank := func(r string) Row {
		return ep(telemetry.Endpoint{Name: "gpu-1:8000/qwen [dp " + r + "]", Model: "qwen", Group: "gpu-1:8000/qwen",
			Replica: telemetry.RankReplica(r), Labels: map[string]string{telemetry.LabelRank: r, telemetry.LabelTarget: down}})
	}
	rows := []Row{
		ep(telemetry.Endpoint{Name: "gpu-1:8000/qwen", Model: "qwen", Labels: map[string]string{telemetry.LabelTarget: down}}),
		rank("1"), rank("0"),
		ep(telemetry.Endpoint{Name: "gpu-1:8000/llama", Model: "llama"}),
	}
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 20)
	m.SetRows(rows)
	shown := func() string {
		var out []string
		for _, r := range m.rows {
			out = append(out, m.displayName(r))
		}
		return fmt.Sprintf("%q", out)
	}
	if got, want := shown(), `["llama" "qwen dp×2 +"]`; got != want {
		t.Fatalf("collapsed: %s, want %s", got, want)
	}
	if c := m.Counts(); c != (Counts{Endpoints: 2, AllEndpoints: 2, Down: 1}) {
		t.Errorf("counts %+v: two endpoints, one down; ranks are none", c)
	}
	m.Move(1) // qwen
	if !m.ToggleExpand() {
		t.Fatal("qwen did not expand")
	}
	if got, want := shown(), `["llama" "qwen dp×2 -" "  dp rank 0" "  dp rank 1"]`; got != want {
		t.Fatalf("expanded: %s, want %s", got, want)
	}
	if c := m.Counts(); c != (Counts{Endpoints: 2, AllEndpoints: 2, Down: 1}) {
		t.Errorf("expanded counts %+v", c)
	}
}
