package telemetry

import (
	"math"
	"testing"
)

func hist(mean, count float64) SignalSnapshot {
	return SignalSnapshot{Mean: &mean, Count: count, Source: "promql:x", State: Live}
}

// A P/D model is found by its role-labelled rows; its TTFT parts come from
// the pools' per-request means (weighted by counts over a pool's rows),
// the first decode being the decode TTFT less the transfer it waited for;
// its workers are the pools' replicas, a down one not counted up.
func TestPDModelsAndTTFTParts(t *testing.T) {
	down := FormatTarget(TargetHealth{State: TargetDown, Reason: "connection refused"})
	snap := Snapshot{Endpoints: []EndpointSnapshot{
		{Endpoint: Endpoint{Name: "m [prefill]", Model: "m", Aggregate: true, Labels: map[string]string{LabelRole: RolePrefill}},
			Server: map[Signal]SignalSnapshot{TTFT: hist(50, 10), QueueTime: hist(10, 10)}},
		{Endpoint: Endpoint{Name: "p0/m", Model: "m", Group: "m [prefill]"}},
		{Endpoint: Endpoint{Name: "d0/m", Model: "m", Labels: map[string]string{LabelRole: RoleDecode}},
			Signals: map[Signal]SignalSnapshot{TTFT: hist(100, 5), KVTransferTime: hist(60, 5)}},
		{Endpoint: Endpoint{Name: "d1/m", Model: "m", Labels: map[string]string{LabelRole: RoleDecode, LabelTarget: down}},
			Signals: map[Signal]SignalSnapshot{TTFT: hist(40, 15), KVTransferTime: hist(20, 15)}},
		{Endpoint: Endpoint{Name: "m", Model: "m", Engine: EngineLLMD}, Signals: map[Signal]SignalSnapshot{TTFT: hist(120, 20)}},
		{Endpoint: Endpoint{Name: "other", Model: "o", Labels: map[string]string{LabelRole: RoleDecode}}},
	}}
	models := PDModels(snap)
	if len(models) != 1 || models[0].Model != "m" {
		t.Fatalf("models %+v, want m alone (o has no prefill pool)", models)
	}
	m := models[0]
	if m.PrefillWorkers != 1 || m.DecodeWorkers != 2 || m.DecodeUp != 1 || len(m.Routers) != 1 {
		t.Errorf("workers: prefill %d, decode %d (%d up), routers %d; want 1, 2 (1 up), 1", m.PrefillWorkers, m.DecodeWorkers, m.DecodeUp, len(m.Routers))
	}
	p, ok := m.TTFTParts()
	// Decode TTFT (100×5 + 40×15)/20 = 55, transfer (60×5 + 20×15)/20 = 30.
	want := TTFTParts{PrefillQueue: 10, Prefill: 40, KVTransfer: 30, FirstDecode: 25, Sum: 105}
	if !ok || p.Router == nil || *p.Router != 120 {
		t.Fatalf("parts %+v ok=%v, want a router figure of 120", p, ok)
	}
	p.Router = nil
	for _, d := range []float64{p.PrefillQueue - want.PrefillQueue, p.Prefill - want.Prefill, p.KVTransfer - want.KVTransfer,
		p.FirstDecode - want.FirstDecode, p.Sum - want.Sum} {
		if math.Abs(d) > 1e-9 {
			t.Fatalf("parts %+v, want %+v", p, want)
		}
	}
	// A probed router whose probe named it after the worker that answers
	// is still the router: it carries the router's own signal.
	snap.Endpoints[4].Engine = EngineVLLM
	if m := PDModels(snap)[0]; len(m.Routers) != 0 {
		t.Errorf("a vLLM row without router signals taken as the router")
	}
	snap.Endpoints[4].Server = map[Signal]SignalSnapshot{RouterTTFTMisses: {State: Live}}
	if m := PDModels(snap)[0]; len(m.Routers) != 1 {
		t.Errorf("the router row with its SLO-violation figure not taken as the router")
	}
	// Without the transfer figure there are no parts: none taken as zero.
	delete(snap.Endpoints[2].Signals, KVTransferTime)
	delete(snap.Endpoints[3].Signals, KVTransferTime)
	if p, ok := PDModels(snap)[0].TTFTParts(); ok {
		t.Errorf("parts %+v without a KV transfer figure", p)
	}
}
