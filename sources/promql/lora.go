package promql

import (
	"strings"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/telemetry"
)

// LoRA adapters in PromQL mode, as the direct scrape reads them
// (sources/scrape/lora.go): an engine's LoRA info gauge (vLLM's
// lora_requests_info) writes a series per change, valued the time of the
// change, whose labels list the adapters with running and waiting
// requests. It has no model label, so its query keeps each replica's
// newest series (topk by the replica labels) and gives it the model label
// of the replica's running-requests gauge, for a replica serving one
// model only: as on a scraped page, a label-less series on a server of
// several models belongs to none of them for sure. A replica counts its
// own adapters; a model row the distinct adapters of its replicas.

// loraSignal tags the LoRA query's answer; it is not a figure of its own.
const loraSignal telemetry.Signal = "ttftop_lora_info"

// loraExpr is a family's LoRA query, "" when its engine lists no adapters
// or has no running gauge to take the model from.
func (g generator) loraExpr(f *family) string {
	li := f.spec.LoRA
	running := f.spec.Signals[telemetry.Running]
	if li.Info == "" || len(running) == 0 || len(f.modelLabels) == 0 {
		return ""
	}
	all := g.by(f, true)
	var repL []string
	model := map[string]bool{}
	for _, l := range f.modelLabels {
		model[l] = true
	}
	for _, l := range strings.Split(all, ", ") {
		if !model[l] {
			repL = append(repL, l)
		}
	}
	rep := strings.Join(repL, ", ")
	anchor := "max by (" + all + ") (" + f.claimed(running[0].Name, selector(running[0].Name, running[0].Match, "")) + ")"
	// The model labels of replicas with one model: 1 per replica and model.
	models := "(" + anchor + " * 0 + 1 unless on (" + rep + ") (count by (" + rep + ") (" + anchor + ") > 1))"
	newest := "topk by (" + rep + ") (1, " + f.claimed(li.Info, li.Info) + ")"
	return tagged("max by ("+all+", "+li.RunningLabel+", "+li.WaitingLabel+") ("+
		newest+" * on ("+rep+") group_left ("+strings.Join(f.modelLabels, ", ")+") "+models+")", f.tag)
}

// lora reads the LoRA query's answer: per endpoint (each replica and its
// model row) the distinct adapters running and waiting.
func (rd *round) lora(a answer) {
	if !rd.outcome(a, "LoRA adapters") {
		return
	}
	vec, ok := rd.vector(a, "LoRA adapters")
	if !ok {
		return
	}
	type adapters struct{ running, waiting map[string]bool }
	byEndpoint := map[*endpointState]*adapters{}
	var order []*endpointState
	for _, smp := range vec {
		f := rd.reg.parser.fams[rd.reg.parser.parse(smp.Metric).family]
		if f == nil {
			continue
		}
		li := f.spec.LoRA
		for _, e := range rd.reg.resolve(smp.Metric, true) {
			ad := byEndpoint[e]
			if ad == nil {
				ad = &adapters{running: map[string]bool{}, waiting: map[string]bool{}}
				byEndpoint[e] = ad
				order = append(order, e)
			}
			for _, n := range li.Adapters(string(smp.Metric[model.LabelName(li.RunningLabel)])) {
				ad.running[n] = true
			}
			for _, n := range li.Adapters(string(smp.Metric[model.LabelName(li.WaitingLabel)])) {
				ad.waiting[n] = true
			}
		}
	}
	if len(vec) == 0 {
		return
	}
	eval := rd.s.localEval(vec[0].Timestamp.Time())
	for _, e := range order {
		ad := byEndpoint[e]
		rd.value(e, telemetry.LoRARunning, eval, float64(len(ad.running)), false, false)
		rd.value(e, telemetry.LoRAWaiting, eval, float64(len(ad.waiting)), false, false)
	}
}
