package scrape

import (
	"fmt"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// A new process_start_time_seconds restarts the target's rates at once,
// though its counters have already passed the old life's values and no
// _created says so (a kill -9 and a restart between two scrapes): no rate
// and no histogram interval across it, the endpoint labelled "process
// restarted", dated by the new start; the next scrape's rate is the new
// life's alone. The first start seen is no restart.
func TestNewProcessStartRestartsRates(t *testing.T) {
	page := func(tokens, start float64, counts []float64) string {
		return fmt.Sprintf("# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.3f\n", start) +
			fmt.Sprintf("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %g\n", tokens) +
			hist("vllm:e2e_request_latency_seconds", ttftBounds(), map[string][]float64{`model_name="m"`: counts}, map[string]float64{`model_name="m"`: counts[3]})
	}
	clk := newClock()
	first := float64(clk.Now().Add(-time.Hour).UnixMilli()) / 1000
	tg := newTarget(t, page(1000, first, []float64{1, 2, 3, 4}))
	c := &collector{}
	s := New(Config{URL: tg.URL, Now: clk.Now}, c)
	ep := tg.host() + "/m"
	step := stepper(t, tg, s, clk, c)
	label := func(obs []telemetry.Observation) string {
		var v string
		for _, o := range find(obs, telemetry.KindEndpoint, ep, "") {
			v = o.Info.Labels[telemetry.LabelRestarted]
		}
		return v
	}
	step(page(1000, first, []float64{1, 2, 3, 4}))
	obs := step(page(1100, first, []float64{2, 4, 6, 8}))
	checkGauge(t, obs, ep, telemetry.OutputTPS, 50) // 100 tokens / 2 s
	one(t, obs, telemetry.KindHistogram, ep, telemetry.E2E)
	if l := label(obs); l != "" {
		t.Fatalf("labelled restarted %q by its first process start", l)
	}

	// Restarted 1.5 s ago; its counters already past the old ones.
	restart := clk.Now().Add(500 * time.Millisecond)
	obs = step(page(1300, float64(restart.UnixMilli())/1000, []float64{3, 5, 7, 9}))
	if got := find(obs, telemetry.KindSample, ep, telemetry.OutputTPS); len(got) != 0 {
		t.Fatalf("a rate across the restart: %+v", got)
	}
	if n := len(find(obs, telemetry.KindHistogram, ep, telemetry.E2E)); n != 0 {
		t.Fatalf("the histogram's interval across the restart emitted:\n%s", dump(obs))
	}
	at, how, ok := (telemetry.Endpoint{Labels: map[string]string{telemetry.LabelRestarted: label(obs)}}).Restarted()
	if !ok || how != processRestarted || !at.Equal(restart.Truncate(time.Second)) {
		t.Errorf("restarted label %q, want %q at %s (the new start)", label(obs), processRestarted, restart)
	}
	obs = step(page(1340, float64(restart.UnixMilli())/1000, []float64{4, 6, 8, 10}))
	checkGauge(t, obs, ep, telemetry.OutputTPS, 20) // the new life's 40 tokens / 2 s
	one(t, obs, telemetry.KindHistogram, ep, telemetry.E2E)
}
