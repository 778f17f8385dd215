package detail

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/telemetry"
)

// A base model's detail lists its probed adapters and, where the engine
// reports them, how many adapters have running and waiting requests; a
// row without adapters has no LoRA line, and a missing engine figure is
// left out, never read as 0.
func TestAdaptersLine(t *testing.T) {
	in := baseInput()
	in.h = 80
	in.data.Adapters = []string{"chat-lora", "sql-lora"}
	in.ep.Signals[telemetry.LoRARunning] = scrapedLive(telemetry.SignalSnapshot{Value: f(2)})
	out := ansi.Strip(fresh(ctxFor("default", t0), in))
	if want := " LoRA 2 probed: chat-lora, sql-lora (x lists them); engine: adapters 2 running"; !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
	if strings.Contains(out, "adapters 2 running, ") {
		t.Errorf("a waiting count shown without the engine's figure:\n%s", out)
	}

	if out := ansi.Strip(fresh(ctxFor("default", t0), baseInput())); strings.Contains(out, " LoRA ") {
		t.Errorf("a LoRA line without adapters:\n%s", out)
	}
}
