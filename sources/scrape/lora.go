package scrape

import (
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// lora reads the engine's LoRA info gauge: of its series (one per change,
// valued the time of the change) the newest says which adapters have
// running and waiting requests. Their counts are emitted for the series'
// model, or, as the gauge has no model label, the page's one model.
func (sc *scrape) lora() {
	li := sc.spec.LoRA
	f := sc.page.Families[li.Info]
	if li.Info == "" || f == nil || f.Err != nil {
		return
	}
	var latest *expo.Series
	for _, ser := range f.Series {
		if latest == nil || ser.Value > latest.Value {
			latest = ser
		}
	}
	if latest == nil {
		return
	}
	// vLLM serves one base model per process; on a page naming several
	// models a label-less series belongs to none of them for sure.
	var mv *modelVals
	switch {
	case sc.rawModel(latest) != "" || len(sc.models) == 0:
		mv = sc.model(latest)
	case len(sc.models) == 1:
		mv = sc.models[0]
	default:
		return
	}
	sc.emitValue(mv, telemetry.LoRARunning, float64(len(li.Adapters(latest.Label(li.RunningLabel)))), false)
	sc.emitValue(mv, telemetry.LoRAWaiting, float64(len(li.Adapters(latest.Label(li.WaitingLabel)))), false)
}
