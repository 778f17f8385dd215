package slo

import (
	"slices"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// TestLoneReplicaNotJudged: a model served by one replica is judged once,
// on its model row; a second replica makes each replica judged on its own
// (one slow pod raises its own alert); back to one, that one's alerts end.
func TestLoneReplicaNotJudged(t *testing.T) {
	store := telemetry.NewStore(telemetry.StoreConfig{})
	e := New([]Objective{{Name: "ttft", Kind: Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 1}}, store, Options{})
	t0 := time.Unix(1_700_000_000, 0)
	announce := func(info telemetry.Endpoint) {
		o := telemetry.Observation{Kind: telemetry.KindEndpoint, At: t0, Endpoint: info.Name, Source: "promql:http://p", Info: &info}
		store.Observe(o)
		e.Observe(o)
	}
	judged := func() []string {
		var out []string
		for _, a := range e.Current() {
			out = append(out, a.Endpoint)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	announce(telemetry.Endpoint{Name: "llama", Model: "llama", Aggregate: true})
	announce(telemetry.Endpoint{Name: "10.0.0.1:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.1:8000"})
	e.Evaluate(t0)
	if got := judged(); !slices.Equal(got, []string{"llama"}) {
		t.Errorf("one replica: judged %v, want only the model row", got)
	}
	announce(telemetry.Endpoint{Name: "10.0.0.2:8000/llama", Model: "llama", Group: "llama", Replica: "10.0.0.2:8000"})
	e.Evaluate(t0.Add(time.Second))
	if got := judged(); !slices.Equal(got, []string{"10.0.0.1:8000/llama", "10.0.0.2:8000/llama", "llama"}) {
		t.Errorf("two replicas: judged %v, want both replicas and the model row", got)
	}
	retire := telemetry.Observation{Kind: telemetry.KindRetire, At: t0.Add(2 * time.Second), Endpoint: "10.0.0.2:8000/llama", Err: "gone"}
	store.Observe(retire)
	e.Observe(retire)
	e.Evaluate(t0.Add(2 * time.Second))
	if got := judged(); !slices.Equal(got, []string{"llama"}) {
		t.Errorf("back to one replica: judged %v, want only the model row", got)
	}
}
