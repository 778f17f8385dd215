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

// The status line names the model only when the endpoint's name does not
// already end with it.
func TestInfoSaysTheModelOnce(t *testing.T) {
	for _, c := range []struct {
		name, model string
		want        string
	}{
		{"prod/a/Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B-Instruct", " prod/a/Qwen/Qwen2.5-14B-Instruct · enter for details"},
		{"Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B-Instruct", " Qwen/Qwen2.5-14B-Instruct · enter for details"},
		{"llama-prod", "meta-llama/Llama-3.1-8B-Instruct", " llama-prod · meta-llama/Llama-3.1-8B-Instruct · enter"},
	} {
		m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()})
		m.SetSize(160, 10)
		m.SetRows([]Row{{Endpoint: telemetry.EndpointSnapshot{Endpoint: telemetry.Endpoint{Name: c.name, Model: c.model}}}})
		if got := ansi.Strip(m.Info()); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want it to start %q", c.name, got, c.want)
		}
	}
}
