package table

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// A base model's LoRA adapters (label adapter_of) fold under the base's
// row on their own server, which says how many; x lists them under it and
// hides them again, from the base or from an adapter. An adapter whose
// base is not in the data is a plain row.
func TestAdapterRows(t *testing.T) {
	adapter := func(name, model, base, url string) Row {
		return epRow(telemetry.Endpoint{Name: name, Model: model, BaseURL: url, Labels: map[string]string{"adapter_of": base}})
	}
	m := tableOf([]Row{
		adapter("h:8000/sql-lora", "sql-lora", "llama", "http://h:8000"),
		epRow(telemetry.Endpoint{Name: "g:8000/llama", Model: "llama", BaseURL: "http://g:8000"}),
		epRow(telemetry.Endpoint{Name: "h:8000/llama", Model: "llama", BaseURL: "http://h:8000"}),
		adapter("h:8000/chat-lora", "chat-lora", "llama", "http://h:8000"),
		adapter("g:8000/x-lora", "x-lora", "llama", "http://g:8000"),
		adapter("h:8000/orphan-lora", "orphan-lora", "gone", "http://h:8000"),
	})
	shown := func() string { // full names: the display shortens them by server
		var out []string
		for _, r := range m.rows {
			out = append(out, m.replicaLabel(r, r.Name()))
		}
		return fmt.Sprintf("%q", out)
	}
	collapsed := `["g:8000/llama +1 LoRA +" "h:8000/llama +2 LoRA +" "h:8000/orphan-lora"]`
	if got := shown(); got != collapsed {
		t.Fatalf("collapsed: %s, want %s", got, collapsed)
	}
	// Adapters are endpoints of their own (probed by name), folded or not.
	if c := m.Counts(); c != (Counts{Endpoints: 6, AllEndpoints: 6}) {
		t.Errorf("counts %+v: folded adapters are shown endpoints", c)
	}
	m.Move(1) // h:8000/llama
	if !m.ToggleExpand() {
		t.Fatal("h:8000/llama did not expand")
	}
	if got, want := shown(), `["g:8000/llama +1 LoRA +" "h:8000/llama +2 LoRA -" "  chat-lora" "  sql-lora" "h:8000/orphan-lora"]`; got != want {
		t.Fatalf("expanded: %s, want %s", got, want)
	}
	m.Move(1) // an adapter: x collapses its base
	if !m.ToggleExpand() || shown() != collapsed {
		t.Fatalf("collapse from an adapter: %s", shown())
	}
	if sel, _ := m.Selected(); sel.Name() != "h:8000/llama" {
		t.Errorf("selection after collapse: %s, want the base", sel.Name())
	}
	m.Move(1) // the orphan: nothing to fold
	if m.ToggleExpand() {
		t.Error("an adapter without its base expanded")
	}
}

// A model row with replicas and adapters lists both, replicas first; the
// base of a P/D model's adapters is its router's row, not a pool.
func TestAdaptersBesideReplicas(t *testing.T) {
	pool := map[string]string{telemetry.LabelRole: telemetry.RoleDecode}
	m := tableOf([]Row{
		epRow(telemetry.Endpoint{Name: "a/llama [decode]", Model: "llama", Aggregate: true, Labels: pool}),
		epRow(telemetry.Endpoint{Name: "llama", Model: "llama", Aggregate: true}),
		epRow(telemetry.Endpoint{Name: "10.0.0.1:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.1:8000"}),
		epRow(telemetry.Endpoint{Name: "10.0.0.2:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.2:8000"}),
		epRow(telemetry.Endpoint{Name: "gw:80/a-lora", Model: "a-lora", BaseURL: "http://gw:80", Labels: map[string]string{"adapter_of": "llama"}}),
	})
	m.Move(1) // llama, after the pool
	if !m.ToggleExpand() {
		t.Fatal("llama did not expand")
	}
	var out []string
	for _, r := range m.rows {
		out = append(out, m.displayName(r))
	}
	if got, want := fmt.Sprintf("%q", out), `["a/llama [decode]" "llama ×2 +1 LoRA -" "  10.0.0.1:8000" "  10.0.0.2:8000" "  a-lora"]`; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// A base model served by one replica lists its adapters, not the replica
// (its model row says the same), which still counts as shown.
func TestAdaptersOfALoneReplica(t *testing.T) {
	m := tableOf([]Row{
		epRow(telemetry.Endpoint{Name: "qwen", Model: "qwen", Aggregate: true}),
		epRow(telemetry.Endpoint{Name: "10.0.0.1:8000/qwen", Model: "qwen", Group: "qwen", Replica: "10.0.0.1:8000"}),
		epRow(telemetry.Endpoint{Name: "gw:80/q-lora", Model: "q-lora", Labels: map[string]string{"adapter_of": "qwen"}}),
	})
	if !m.ToggleExpand() {
		t.Fatal("qwen did not expand")
	}
	var out []string
	for _, r := range m.rows {
		out = append(out, m.replicaLabel(r, r.Name()))
	}
	if got, want := fmt.Sprintf("%q", out), `["qwen +1 LoRA -" "  q-lora"]`; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	if c := m.Counts(); c != (Counts{Endpoints: 2, AllEndpoints: 2, Models: 1, AllModels: 1}) {
		t.Errorf("counts %+v: the replica and the adapter are the endpoints", c)
	}
}

// tableOf is a wide table of rows; epRow a row of e.
func tableOf(rows []Row) *Model {
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
	m.SetSize(160, 20)
	m.SetRows(rows)
	return &m
}

func epRow(e telemetry.Endpoint) Row { return Row{Endpoint: telemetry.EndpointSnapshot{Endpoint: e}} }
