package detail

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestProbesListTTFA: the probe list shows TTFA only when a listed probe
// reasoned first, and draws again when it changes.
func TestProbesListTTFA(t *testing.T) {
	ctx := ctxFor("dark", t0)
	in := baseInput()
	if out := ansi.Strip(fresh(ctx, in)); strings.Contains(out, "TTFA") {
		t.Errorf("TTFA column without reasoning:\n%s", out)
	}
	reasoning := 300
	p := &in.data.Probes[0]
	p.TTFAms, p.ReasoningTokens = 2345, &reasoning
	out := ansi.Strip(fresh(ctx, in))
	if !strings.Contains(out, "TTFT    TTFA    TPOT") {
		t.Fatalf("no TTFA column:\n%s", out)
	}
	var row string
	for line := range strings.Lines(out) {
		if strings.Contains(line, "OK 200") {
			row = line
		}
	}
	if !strings.Contains(row, "41ms    2.35s   12ms") {
		t.Errorf("probe row lacks its TTFA between TTFT and TPOT: %q", row)
	}

	m := New(ctx)
	m.Open("ep")
	show(&m, in)
	in = baseInput()
	in.data.Probes[0].TTFAms, in.data.Probes[0].ReasoningTokens = 999, &reasoning
	if got, want := show(&m, in), fresh(ctx, in); got != want {
		t.Errorf("cached probe list kept the old TTFA\ngot:\n%s\nwant:\n%s", got, want)
	}
}
