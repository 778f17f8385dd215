package sim

import (
	"slices"
	"strconv"
	"strings"
)

// loraInUse is what vLLM's lora_requests_info says: the adapters with
// requests running and waiting, and when that last changed (Unix
// seconds, the gauge's value).
type loraInUse struct {
	running, waiting []string
	changed          float64
}

// noteAdapters publishes the adapters of the running and waiting requests
// when they changed (engine goroutine, e.mu held: admit's end).
func (e *engine) noteAdapters() {
	if len(e.spec.Adapters) == 0 {
		return
	}
	names := func(seqs []*seq) []string {
		var out []string
		for _, s := range seqs {
			if s.adapter != "" && !slices.Contains(out, s.adapter) {
				out = append(out, s.adapter)
			}
		}
		slices.Sort(out)
		return out
	}
	running, waiting := names(e.running), names(e.waiting)
	if old := e.lora.Load(); old != nil && slices.Equal(old.running, running) && slices.Equal(old.waiting, waiting) {
		return
	}
	e.lora.Store(&loraInUse{running: running, waiting: waiting, changed: float64(e.srv.wallNow().UnixNano()) / 1e9})
}

// writeLoRAInfo renders vllm:lora_requests_info for the models serving
// adapters, as vLLM's v1/metrics/loggers.py labels it (max_lora, the
// running and waiting adapters comma-separated; no model_name), valued
// the time of the last change. vLLM keeps a series per change; the
// simulator writes the current one (the newest is what counts).
func writeLoRAInfo(b *strings.Builder, snaps []snapshot) {
	wrote := false
	for _, sn := range snaps {
		if len(sn.e.spec.Adapters) == 0 || sn.e.rank > 0 {
			continue // one series per server (no engine label), rank 0's
		}
		if !wrote {
			family(b, "vllm:lora_requests_info", "gauge", "Running stats on lora requests.")
			wrote = true
		}
		in := sn.e.lora.Load()
		if in == nil {
			in = &loraInUse{changed: float64(sn.e.srv.wallStart.UnixNano()) / 1e9}
		}
		sample(b, "vllm:lora_requests_info", `max_lora="`+strconv.Itoa(len(sn.e.spec.Adapters))+
			`",running_lora_adapters="`+escapeLabel(strings.Join(in.running, ","))+
			`",waiting_lora_adapters="`+escapeLabel(strings.Join(in.waiting, ","))+`"`, pyFloat(in.changed))
	}
}
