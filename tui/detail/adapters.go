package detail

import (
	"fmt"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

// adaptersView is the "LoRA" line of a base model's row: the adapters
// probed on it (folded under its row, x lists them) and, where the engine
// says, how many adapters have running and waiting requests (its latest
// lora_requests_info). "" for a row without adapters.
func (m *Model) adaptersView(w int) string {
	if len(m.data.Adapters) == 0 {
		return ""
	}
	r := &m.ctx.Styles.Normal
	names := make([]string, len(m.data.Adapters))
	for i, a := range m.data.Adapters {
		names[i] = common.Safe(a)
	}
	text := fmt.Sprintf(" %d probed: %s (x lists them)", len(names), strings.Join(names, ", "))
	var engine []string
	for _, c := range []struct {
		sig  telemetry.Signal
		word string
	}{{telemetry.LoRARunning, "running"}, {telemetry.LoRAWaiting, "waiting"}} {
		if v := format.Scalar(m.ep.Signals[c.sig]); v != "" {
			engine = append(engine, v+" "+c.word)
		}
	}
	if len(engine) > 0 {
		text += "; engine: adapters " + strings.Join(engine, ", ")
	}
	return common.Cut(m.heading("LoRA")+r.Faint.S(text), w)
}
