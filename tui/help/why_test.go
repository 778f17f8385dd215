package help

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/keys"
)

// The help screen tells where the diagnosis shows: enter's and e's why,
// the row's WHY column, the alert line's "why:" and unclear.
func TestHelpSaysWhereTheWhyIs(t *testing.T) {
	m := New(&common.Context{Styles: themes.NewStyles(themes.Mono()), Glyphs: themes.NewGlyphs(false), Now: time.Now()}, keys.New(false))
	m.SetSize(160, 40)
	text := strings.Join(strings.Fields(ansi.Strip(m.render())), " ")
	for _, want := range []string{"enter details and why", "e errors and why in full", "WHY kv_cache+1",
		"why: prefill: …", "enter's why section", "e lists the same for every unwell endpoint", "unclear"} {
		if !strings.Contains(text, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
