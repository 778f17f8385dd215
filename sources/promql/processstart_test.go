package promql

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// A replica whose process started anew between two refreshes (a kill -9
// and an immediate restart: no gap, no counter reset in its histogram
// chain yet) is restarted at the first refresh that sees the new
// process_start_time_seconds: its output tok/s young since the new start,
// labelled "process restarted", dated by it. The first start seen is a
// birth, not a restart; its twin, whose process did not change, is
// neither; nor is a replica without process starts.
func TestNewProcessStartRestartsRates(t *testing.T) {
	t0 := time.Unix(1_000_000, 0).Add(250 * time.Millisecond)
	var mu sync.Mutex
	starts := map[string]float64{"r1": promTime(t0.Add(-time.Hour)), "r2": promTime(t0.Add(-2 * time.Hour))}
	f := resetFake(t, nil, func(inst string) (float64, bool) {
		mu.Lock()
		defer mu.Unlock()
		v, ok := starts[inst]
		return v, ok
	})
	s, rec, clk := clockedSource(t, f, t0)
	young := func(name string) time.Duration {
		got := rec.find(telemetry.KindSample, name, telemetry.OutputTPS)
		if len(got) == 0 {
			t.Fatalf("%s has no output tok/s", name)
		}
		return got[len(got)-1].SeriesAge
	}
	label := func(name string) string {
		var v string
		for _, o := range rec.find(telemetry.KindEndpoint, name, "") {
			v = o.Info.Labels[telemetry.LabelRestarted]
		}
		return v
	}
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if age, l := young("r1/llama"), label("r1/llama"); age != 0 || l != "" {
		t.Fatalf("first refresh: r1 young %s, restarted %q; its first start is no restart", age, l)
	}

	restart := t0.Add(3 * time.Second)
	mu.Lock()
	starts["r1"] = promTime(restart)
	mu.Unlock()
	clk.Add(5 * time.Second)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if age := young("r1/llama"); age < time.Second || age > 3*time.Second {
		t.Errorf("r1's output tok/s series age %s after its process restarted 2s ago, want about 2s", age)
	}
	at, how, ok := telemetry.Endpoint{Labels: map[string]string{telemetry.LabelRestarted: label("r1/llama")}}.Restarted()
	if !ok || how != processRestarted || !at.Equal(restart.Truncate(time.Second)) {
		t.Errorf("r1's restarted label %q: want %q dated %s (its new start, to the second)", label("r1/llama"), processRestarted, restart)
	}
	if age, l := young("r2/llama"), label("r2/llama"); age != 0 || l != "" {
		t.Errorf("its twin: series age %s, restarted label %q; want neither", age, l)
	}
	if row := young("llama"); row <= 0 {
		t.Errorf("the model row's output tok/s not young (%s): it sums a restarted replica's", row)
	}
}
