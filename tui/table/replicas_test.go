package table

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// A model's replicas sit under its aggregate row, which says how many
// there are; x lists them right under it, indented, and hides them again.
func TestReplicaRows(t *testing.T) {
	ep := func(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
	rows := []Row{
		ep(telemetry.Endpoint{Name: "10.0.0.2:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.2:8000"}),
		ep(telemetry.Endpoint{Name: "qwen", Model: "qwen"}),
		ep(telemetry.Endpoint{Name: "llama", Model: "llama", Aggregate: true}),
		ep(telemetry.Endpoint{Name: "10.0.0.1:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.1:8000"}),
		// A replica whose aggregate is not in the data is a plain row.
		ep(telemetry.Endpoint{Name: "10.0.0.9:8000/orphan", Model: "orphan", Group: "orphan", Replica: "10.0.0.9:8000"}),
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
	if got, want := shown(), `["10.0.0.9:8000/orphan" "llama ×2 +" "qwen"]`; got != want {
		t.Fatalf("collapsed: %s, want %s", got, want)
	}
	// Four serving endpoints (two replicas, qwen, the orphan) in one
	// model row: the aggregate is no endpoint of its own.
	if c := m.Counts(); c != (Counts{Endpoints: 4, AllEndpoints: 4, Models: 1, AllModels: 1}) {
		t.Errorf("counts %+v: folded replicas are shown, the model row is no endpoint", c)
	}
	m.Move(1) // llama
	if !m.ToggleExpand() {
		t.Fatal("llama did not expand")
	}
	if got, want := shown(), `["10.0.0.9:8000/orphan" "llama ×2 -" "  10.0.0.1:8000" "  10.0.0.2:8000" "qwen"]`; got != want {
		t.Fatalf("expanded: %s, want %s", got, want)
	}
	m.Move(1) // a replica: x collapses its aggregate
	if !m.ToggleExpand() || shown() != `["10.0.0.9:8000/orphan" "llama ×2 +" "qwen"]` {
		t.Fatalf("collapse from a replica: %s", shown())
	}
	if sel, _ := m.Selected(); sel.Name() != "llama" {
		t.Errorf("selection after collapse: %s, want the aggregate", sel.Name())
	}
	m.Move(1) // qwen: no replicas
	if m.ToggleExpand() {
		t.Error("qwen has no replicas to expand")
	}
}

// A model served by one replica is one plain row: no "×1", nothing to
// expand, the replica not listed (its model row says the same).
func TestLoneReplicaIsTheModelRow(t *testing.T) {
	ep := func(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 20)
	m.SetRows([]Row{
		ep(telemetry.Endpoint{Name: "llama", Model: "llama", Aggregate: true}),
		ep(telemetry.Endpoint{Name: "10.0.0.1:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.1:8000"}),
	})
	var names []string
	for _, r := range m.rows {
		names = append(names, m.displayName(r))
	}
	if fmt.Sprint(names) != "[llama]" {
		t.Errorf("rows %q, want the model row alone, unmarked", names)
	}
	if m.ToggleExpand() {
		t.Error("a lone replica's model row expanded")
	}
	if c := m.Counts(); c != (Counts{Endpoints: 1, AllEndpoints: 1, Models: 1, AllModels: 1}) {
		t.Errorf("counts %+v: one model on one replica is one endpoint, not two", c)
	}
}

// A filter counts what it lets through: a replica it matches whose
// model row it does not is listed on its own, and counted.
func TestReplicaCountsFiltered(t *testing.T) {
	ep := func(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 20)
	m.SetRows([]Row{
		ep(telemetry.Endpoint{Name: "a/llama", Model: "llama", Aggregate: true}),
		ep(telemetry.Endpoint{Name: "a/10.0.0.1:8000/llama", Model: "llama", Group: "a/llama", Replica: "10.0.0.1:8000"}),
		ep(telemetry.Endpoint{Name: "a/10.0.0.2:8000/llama", Model: "llama", Group: "a/llama", Replica: "10.0.0.2:8000"}),
		ep(telemetry.Endpoint{Name: "b/qwen", Model: "qwen", Aggregate: true}),
		ep(telemetry.Endpoint{Name: "b/10.0.1.1:8000/qwen", Model: "qwen", Group: "b/qwen", Replica: "10.0.1.1:8000"}),
	})
	if c := m.Counts(); c != (Counts{Endpoints: 3, AllEndpoints: 3, Models: 2, AllModels: 2}) {
		t.Errorf("unfiltered counts %+v", c)
	}
	m.Filter().input().SetValue("10.0.0.2")
	m.FilterChanged()
	if c := m.Counts(); c != (Counts{Endpoints: 1, AllEndpoints: 3, Models: 0, AllModels: 2}) {
		t.Errorf("filtered counts %+v, want the one matching replica", c)
	}
	if len(m.rows) != 1 || m.rows[0].Name() != "a/10.0.0.2:8000/llama" {
		t.Errorf("filtered rows: %d, want the matching replica listed", len(m.rows))
	}
}

// A model row some of whose replicas stopped says how many its summed
// figures count ("×1/2"), as its replicas_counted label says; without the
// label, the plain count.
func TestModelRowSaysReplicasCounted(t *testing.T) {
	ep := func(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
	rows := []Row{
		ep(telemetry.Endpoint{Name: "llama", Model: "llama", Aggregate: true,
			Labels: map[string]string{telemetry.LabelReplicasCounted: "1 of 2 replicas: 1 stopped, left out of its summed figures"}}),
		ep(telemetry.Endpoint{Name: "10.0.0.1:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.1:8000"}),
		ep(telemetry.Endpoint{Name: "10.0.0.2:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.2:8000"}),
	}
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 20)
	m.SetRows(rows)
	if got := m.displayName(m.rows[0]); got != "llama ×1/2 +" {
		t.Errorf("model row with a stopped replica: %q, want \"llama ×1/2 +\"", got)
	}
	delete(rows[0].Endpoint.Labels, telemetry.LabelReplicasCounted)
	m.SetRows(rows)
	if got := m.displayName(m.rows[0]); got != "llama ×2 +" {
		t.Errorf("model row, all replicas live: %q, want \"llama ×2 +\"", got)
	}
}

// A row whose source marks it restarted says RESTARTED after its name: a
// model row after its count, a replica after its identity; the others
// say nothing.
func TestRestartedRowsSaySo(t *testing.T) {
	restarted := map[string]string{telemetry.LabelRestarted: telemetry.RestartedLabel(time.Now().Add(-time.Minute), "counter reset")}
	ep := func(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
	rows := []Row{
		ep(telemetry.Endpoint{Name: "llama", Model: "llama", Aggregate: true, Labels: restarted}),
		ep(telemetry.Endpoint{Name: "10.0.0.1:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.1:8000", Labels: restarted}),
		ep(telemetry.Endpoint{Name: "10.0.0.2:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.2:8000"}),
		ep(telemetry.Endpoint{Name: "qwen", Model: "qwen", Labels: restarted}),
	}
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 20)
	m.SetRows(rows)
	m.Move(0)
	if !m.ToggleExpand() {
		t.Fatal("llama did not expand")
	}
	var out []string
	for _, r := range m.rows {
		out = append(out, m.displayName(r))
	}
	if got, want := fmt.Sprintf("%q", out), `["llama ×2 - RESTARTED" "  10.0.0.1:8000 RESTARTED" "  10.0.0.2:8000" "qwen RESTARTED"]`; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}
