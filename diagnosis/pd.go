package diagnosis

import (
	"fmt"
	"slices"
	"sort"

	"github.com/ttftop/ttftop/telemetry"
)

// Causes of a disaggregated (P/D) model (docs/disaggregated.md), named on
// its router and pool rows.
const (
	KVTransfer Cause = "kv_transfer" // KV transfers fail, or they are the largest part of an unwell model's TTFT
	PDRatio    Cause = "pd_ratio"    // one pool saturated while the other has room: the P:D ratio is off
)

// Figures of the P/D rules (milliseconds, the pools' per-request means).
const (
	figKVTransfer  = string(telemetry.KVTransferTime)
	figKVFailures  = string(telemetry.KVTransferFailures)
	figPartsSum    = "ttft_parts_ms" // prefill TTFT + decode TTFT
	figPrefillWait = "prefill_queue_ms"
	figFirstDecode = "first_decode_ms"
	figDecodeKV    = "decode_pool_kv_cache"
	figPrefillUp   = "prefill_workers_up"
	figDecodeUp    = "decode_workers_up"
)

// raisePD adds the P/D causes to the rows of each disaggregated model of
// snap: its routers' and its pools'. KV transfer failures are a symptom
// in themselves; the other rules only speak for a row already unwell
// (named something other than none), as the latency rules do.
func raisePD(snap telemetry.Snapshot, out []Diagnosis) {
	index := map[string]int{}
	for i, es := range snap.Endpoints {
		index[es.Name] = i
	}
	for _, m := range telemetry.PDModels(snap) {
		rows := slices.Concat(m.Routers, m.Prefill, m.Decode)
		for _, es := range rows {
			i := index[es.Name]
			unwell := out[i].Leading() != None && out[i].Leading() != Down
			found := pdFindings(m, unwell)
			if len(found) == 0 {
				continue
			}
			out[i].Causes = slices.DeleteFunc(out[i].Causes, func(f Finding) bool { return f.Cause == None || f.Cause == Unclear })
			out[i].Causes = append(out[i].Causes, found...)
			sort.SliceStable(out[i].Causes, func(a, b int) bool { return rank(out[i].Causes[a].Cause) < rank(out[i].Causes[b].Cause) })
		}
	}
}

// pdFindings are the model's P/D causes.
func pdFindings(m telemetry.PDModel, unwell bool) []Finding {
	var found []Finding
	failures, failing := poolValue(m.Decode, telemetry.KVTransferFailures)
	parts, ok := m.TTFTParts()
	switch {
	case failing && failures > 0:
		evs := []Evidence{{Figure: figKVFailures, Stat: "value", Value: round(failures), Unit: "/s"}}
		if ok {
			evs = append(evs, partsEvidence(parts, figKVTransfer)...)
		}
		found = append(found, Finding{Cause: KVTransfer, Summary: "KV transfers failing", Evidence: evs,
			Next: "failed transfers are recomputed or fail: check the NIXL/RDMA link between the pools and the workers' logs"})
	case unwell && ok && largest(parts) == figKVTransfer && parts.KVTransfer >= termShare*parts.Sum:
		found = append(found, Finding{Cause: KVTransfer,
			Summary:  fmt.Sprintf("KV transfer: %.0f of %.0f ms of TTFT", parts.KVTransfer, parts.Sum),
			Evidence: partsEvidence(parts, figKVTransfer),
			Next:     "the prefill-to-decode link is slow: check its bandwidth and congestion, and the KV connector's settings"})
	}
	if !unwell || !ok {
		return found
	}
	kv, kvOK := poolValue(m.Decode, telemetry.KVCache)
	ratio := fmt.Sprintf("P:D %d:%d", m.PrefillUp, m.DecodeUp)
	workers := []Evidence{{Figure: figPrefillUp, Stat: "value", Value: float64(m.PrefillUp)},
		{Figure: figDecodeUp, Stat: "value", Value: float64(m.DecodeUp)}}
	decodeKV := Evidence{Figure: figDecodeKV, Stat: "value", Value: round(kv), Unit: "%", Baseline: ptr(kvFullPct), BaselineFrom: "ratio"}
	switch {
	case largest(parts) == figPrefillWait && parts.PrefillQueue >= termShare*parts.Sum && kvOK && kv < kvFullPct:
		found = append(found, Finding{Cause: PDRatio, Summary: ratio + ": the prefill pool queues, the decode pool has room",
			Evidence: append(append(partsEvidence(parts, figPrefillWait), decodeKV), workers...),
			Next:     "move workers from decode to prefill, or add prefill workers"})
	case kvOK && kv >= kvFullPct && parts.PrefillQueue < termShare*parts.Sum:
		found = append(found, Finding{Cause: PDRatio, Summary: ratio + ": the decode pool is full, the prefill pool has room",
			Evidence: append(append([]Evidence{decodeKV}, partsEvidence(parts, figFirstDecode)...), workers...),
			Next:     "move workers from prefill to decode, or add decode workers"})
	}
	return found
}

// partsEvidence shows the named part first, then the TTFT parts' sum and
// the router's TTFT when known.
func partsEvidence(p telemetry.TTFTParts, first string) []Evidence {
	value := map[string]float64{figKVTransfer: p.KVTransfer, figPrefillWait: p.PrefillQueue, figFirstDecode: p.FirstDecode}
	evs := []Evidence{{Figure: first, Stat: "mean", Value: round(value[first]), Unit: "ms"},
		{Figure: figPartsSum, Stat: "mean", Value: round(p.Sum), Unit: "ms"}}
	if p.Router != nil {
		evs = append(evs, Evidence{Figure: "router_" + string(telemetry.TTFT), Stat: "mean", Value: round(*p.Router), Unit: "ms"})
	}
	return evs
}

// largest names the largest of the four TTFT parts.
func largest(p telemetry.TTFTParts) string {
	name, v := figPrefillWait, p.PrefillQueue
	for _, c := range []struct {
		name string
		v    float64
	}{{"prefill_ms", p.Prefill}, {figKVTransfer, p.KVTransfer}, {figFirstDecode, p.FirstDecode}} {
		if c.v > v {
			name, v = c.name, c.v
		}
	}
	return name
}

// poolValue is a pool's live value of a value signal: the largest over
// its rows (the fullest cache, the most failures); ok is false without one.
func poolValue(rows []telemetry.EndpointSnapshot, sig telemetry.Signal) (float64, bool) {
	best, ok := 0.0, false
	for _, es := range rows {
		s, has := serverSide(es, sig)
		if !has || !live(s) || s.Value == nil {
			continue
		}
		if !ok || *s.Value > best {
			best, ok = *s.Value, true
		}
	}
	return best, ok
}
