package table

import (
	"fmt"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// P/D workers scraped on their own are rows of one model at their own
// addresses: each shows its pool after its name, as PromQL's pools are
// named; the router's row is the model as users get it and says nothing,
// and a pool's replicas sit under a row that says it.
func TestScrapedPDWorkersSayTheirPool(t *testing.T) {
	role := func(r string) map[string]string { return map[string]string{telemetry.LabelRole: r} }
	m := tableOf([]Row{
		epRow(telemetry.Endpoint{Name: "r:8000/llama", Model: "llama", BaseURL: "http://r:8000"}),
		epRow(telemetry.Endpoint{Name: "p:8000/llama", Model: "llama", BaseURL: "http://p:8000", Labels: role(telemetry.RolePrefill)}),
		epRow(telemetry.Endpoint{Name: "d:8000/llama", Model: "llama", BaseURL: "http://d:8000", Labels: role(telemetry.RoleDecode)}),
		epRow(telemetry.Endpoint{Name: "llama [decode]", Model: "llama", Aggregate: true, Labels: role(telemetry.RoleDecode)}),
		epRow(telemetry.Endpoint{Name: "pod-d1/llama", Model: "llama", Group: "llama [decode]", Replica: "pod-d1", Labels: role(telemetry.RoleDecode)}),
	})
	var got []string
	for _, r := range m.rows {
		got = append(got, m.displayName(r))
	}
	want := `["d:8000/llama [decode]" "llama [decode]" "p:8000/llama [prefill]" "r:8000/llama"]`
	if s := fmt.Sprintf("%q", got); s != want {
		t.Errorf("rows %s, want %s", s, want)
	}
}
