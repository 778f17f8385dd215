//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/telemetry"
)

// demo --pd serves the disaggregated model: its JSON read-outs have one
// prefill and two decode workers labelled with their roles, the decode
// ones with KV transfer times, and the router's row, which the views take
// for the model's router (telemetry.PDModels).
func TestDemoPDShowsPools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	run(ctx, []string{"demo", "--pd", "--json", "--refresh", "1s"}, &out, &errs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var snap telemetry.Snapshot
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &snap); err != nil {
		t.Fatalf("last read-out: %v\n%.300s\nstderr %q", err, lines[len(lines)-1], errs.String())
	}
	models := telemetry.PDModels(snap)
	if len(models) != 1 || models[0].Model != sim.DemoPD {
		t.Fatalf("disaggregated models %+v, want %s", models, sim.DemoPD)
	}
	m := models[0]
	if m.PrefillWorkers != 1 || m.DecodeWorkers != 2 || len(m.Routers) != 1 {
		t.Errorf("%d prefill, %d decode workers, %d routers; want 1, 2, 1", m.PrefillWorkers, m.DecodeWorkers, len(m.Routers))
	}
	if kv, ok := m.PoolMean(telemetry.RoleDecode, telemetry.KVTransferTime); !ok || kv <= 0 {
		t.Errorf("decode pool's KV transfer mean %v (%v), want one", kv, ok)
	}
}
