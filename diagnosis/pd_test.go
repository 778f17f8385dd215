package diagnosis

import (
	"testing"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// pdSnapshot is a P/D model m: the router's row, a prefill pool (TTFT
// and queue) and a decode pool (TTFT, KV transfer time and failures, KV
// use), all the engines' own figures.
func pdSnapshot(prefillTTFT, queue, decodeTTFT, kvMs, failures, kvUse float64) telemetry.Snapshot {
	pool := func(name, role string, server map[telemetry.Signal]float64) telemetry.EndpointSnapshot {
		es := endpoint(name, figs{server: server})
		es.Model, es.Labels = "m", map[string]string{telemetry.LabelRole: role}
		return es
	}
	router := endpoint("m", figs{server: map[telemetry.Signal]float64{telemetry.TTFT: prefillTTFT + decodeTTFT + 5}})
	router.Model, router.Engine = "m", telemetry.EngineLLMD
	return telemetry.Snapshot{At: t0, Endpoints: []telemetry.EndpointSnapshot{router,
		pool("m [prefill]", telemetry.RolePrefill, map[telemetry.Signal]float64{telemetry.TTFT: prefillTTFT, telemetry.QueueTime: queue}),
		pool("m [decode]", telemetry.RoleDecode, map[telemetry.Signal]float64{telemetry.TTFT: decodeTTFT,
			telemetry.KVTransferTime: kvMs, telemetry.KVTransferFailures: failures, telemetry.KVCache: kvUse}),
	}}
}

func leading(t *testing.T, diags []Diagnosis, name string) Diagnosis {
	t.Helper()
	for _, d := range diags {
		if d.Endpoint == name {
			return d
		}
	}
	t.Fatalf("no diagnosis of %s", name)
	return Diagnosis{}
}

// The P/D causes: a transfer that is most of an unwell model's TTFT, and
// failing transfers even when nothing else is wrong, are kv_transfer; a
// queueing prefill pool beside a decode pool with room, or a full decode
// pool beside an idle prefill pool, is pd_ratio; a well model is none.
func TestPDCauses(t *testing.T) {
	slow := []slo.Alert{{Objective: "ttft-p95", Endpoint: "m", Signal: telemetry.TTFT, State: slo.Firing}}
	for _, c := range []struct {
		name                                    string
		prefill, queue, decode, kv, fail, kvUse float64
		alerts                                  []slo.Alert
		want                                    Cause
		summary                                 string
	}{
		{"slow transfer", 60, 10, 400, 350, 0, 40, slow, KVTransfer, "KV transfer: 350 of 460 ms of TTFT"},
		{"failing transfers", 60, 10, 90, 40, 0.5, 40, nil, KVTransfer, "KV transfers failing"},
		{"prefill pool short", 500, 420, 90, 40, 0, 30, slow, PDRatio, "P:D 1:1: the prefill pool queues, the decode pool has room"},
		{"decode pool short", 60, 5, 400, 40, 0, 95, slow, PDRatio, "P:D 1:1: the decode pool is full, the prefill pool has room"},
		{"well", 60, 10, 90, 40, 0, 40, nil, None, "healthy"},
		{"slow, not the transfer", 300, 10, 90, 40, 0, 40, slow, Unclear, ""},
		{"both pools full: no ratio to change", 500, 420, 400, 40, 0, 95, slow, Unclear, ""},
	} {
		d := New(Config{})
		diags := d.Update(pdSnapshot(c.prefill, c.queue, c.decode, c.kv, c.fail, c.kvUse), c.alerts)
		got := leading(t, diags, "m")
		if got.Leading() != c.want || (c.summary != "" && got.Causes[0].Summary != c.summary) {
			t.Errorf("%s: router row %+v, want %s %q", c.name, got.Causes, c.want, c.summary)
		}
		if c.want == KVTransfer && c.fail > 0 {
			if pool := leading(t, diags, "m [decode]"); pool.Leading() != KVTransfer {
				t.Errorf("%s: decode pool %v, want kv_transfer", c.name, causes(pool))
			}
		}
	}
}
