//go:build integration

package promql

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/telemetry"
)

// TestIntegrationRouterPool: the simulated llm-d router's pool gauges
// (labelled by the pool, no model) through a real Prometheus are the
// router row's pool figures: ready endpoints as many as the workers up
// (3, then 2 once a decode worker is closed), queue and KV as the router
// wrote them; the router's model row and its replica are its only rows
// (none for the pool's series, which name no model).
func TestIntegrationRouterPool(t *testing.T) {
	ctx := promIntegration(t)
	var shift atomic.Int64
	pd := simtest.StartPD(t, 11, &shift)
	prom := promtest.Start(t, promtest.Target{Job: "epp", URL: pd.Router().URL() + "/metrics"})
	prom.WaitTargetsUp(t, 30*time.Second)
	prom.WaitForSeries(t, "llm_d_epp_ready_endpoints", 1, 30*time.Second)

	rec, until := sourceOver(t, ctx, prom)
	router := pd.Model()
	latest := func(sig telemetry.Signal) (float64, bool) {
		obs := rec.find(telemetry.KindSample, router, sig)
		if len(obs) == 0 {
			return 0, false
		}
		return obs[len(obs)-1].Value, true
	}
	raw := func(name string) float64 {
		ss := prom.Query(t, name, time.Time{})
		if len(ss) != 1 {
			t.Fatalf("%s: %d series", name, len(ss))
		}
		return ss[0].Value
	}
	state := func() string { return fmt.Sprintf("endpoints %v", announced(rec)) }
	readyIs := func(n float64) func() bool {
		return func() bool { v, ok := latest(telemetry.RouterPoolReady); return ok && v == n }
	}
	until("3 ready endpoints", readyIs(float64(len(pd.Workers()))), state)
	// Read as the model's, not as a series of no model (the GPU joins'
	// path, which warns that it joins nothing).
	if w := rec.status(t).Warnings; len(w) != 0 {
		t.Errorf("warnings %v", w)
	}
	for sig, name := range map[telemetry.Signal]string{telemetry.RouterPoolQueue: "llm_d_epp_average_queue_size",
		telemetry.RouterPoolKV: "llm_d_epp_average_kv_cache_utilization"} {
		if v, ok := latest(sig); !ok || v != raw(name) {
			t.Errorf("%s = %v (%v), want the router's %s %v", sig, v, ok, name, raw(name))
		}
	}
	for _, name := range announced(rec) {
		if name != router && !strings.HasSuffix(name, "/"+router) {
			t.Errorf("endpoint %s beside the router's model row %s and its replica", name, router)
		}
	}
	if err := pd.Decode()[0].Close(); err != nil {
		t.Fatal(err)
	}
	until("2 ready endpoints after a decode worker closed", readyIs(2), state)
}

// announced lists the endpoints announced, in order of first sight.
func announced(rec *recorder) []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range rec.find(telemetry.KindEndpoint, "", "") {
		if !seen[o.Endpoint] {
			seen[o.Endpoint] = true
			out = append(out, o.Endpoint)
		}
	}
	return out
}
