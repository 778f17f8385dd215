package promql

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// TestTargetHealthFromUp: a store whose up says one replica's target is
// down and that has no targets API (Thanos, Mimir): the replica reads
// down since the refresh that first read it, for the reason up gives,
// with TargetUp 0; the other up; the model row half up and "1 of 2
// replicas down"; the status says why there is no better reason. Once up
// no longer has the target, it is GONE, still listed.
func TestTargetHealthFromUp(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	var mu sync.Mutex
	ups := map[string]float64{"llama-a": 1, "llama-b": 0}
	pf := newPodFleet(t, clk, []string{"llama-a", "llama-b"}, func(q string, live []string) []fakeSeries {
		if !strings.Contains(q, "(up)") {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		var ss []fakeSeries
		for pod, v := range ups {
			ss = append(ss, fakeSeries{labels: map[string]string{"pod": pod, "instance": pod + ":8000"}, value: v})
		}
		return ss
	})
	s, rec := newTestSource(t, testConfig(pf.f.URL()))
	s.now = clk.Now
	refresh := func() {
		t.Helper()
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	first := clk.Now()
	clk.Add(5 * time.Second)
	refresh()
	lastUp := func(name string) float64 {
		got := rec.find(telemetry.KindSample, name, telemetry.TargetUp)
		if len(got) != 1 {
			t.Fatalf("%s: %d target-up samples, want 1", name, len(got))
		}
		return got[0].Value
	}
	if a, b, row := lastUp("llama-a/llama"), lastUp("llama-b/llama"), lastUp("llama"); a != 1 || b != 0 || row != 0.5 {
		t.Errorf("target up: llama-a %v, llama-b %v, model row %v; want 1, 0, 0.5", a, b, row)
	}
	info := s.state.reg.byName["llama-b/llama"].info
	h, ok := info.Target()
	if !ok || h.State != telemetry.TargetDown || !h.Since.Equal(first) || !strings.Contains(h.Reason, "up = 0") {
		t.Errorf("llama-b target %+v (labelled %v), want down since the first refresh (%s), reason from up", h, ok, first)
	}
	if _, ok := s.state.reg.byName["llama-a/llama"].info.Target(); ok {
		t.Errorf("llama-a labelled %q while up", s.state.reg.byName["llama-a/llama"].info.Labels[telemetry.LabelTarget])
	}
	if got := s.state.reg.byName["llama"].info.Labels[telemetry.LabelReplicasDown]; got != "1 of 2 replicas down" {
		t.Errorf("model row's %s %q, want 1 of 2 replicas down", telemetry.LabelReplicasDown, got)
	}
	if w := strings.Join(rec.status(t).Warnings, "; "); !strings.Contains(w, "targets API") {
		t.Errorf("status warnings %q do not say the store has no targets API", w)
	}

	mu.Lock()
	delete(ups, "llama-b") // dropped by service discovery
	mu.Unlock()
	clk.Add(5 * time.Second)
	refresh()
	checkGone(t, rec, "llama-b/llama")
	if got := s.state.reg.byName["llama"].info.Labels[telemetry.LabelReplicasDown]; got != "1 of 2 replicas down" {
		t.Errorf("model row's %s %q once gone, want 1 of 2 replicas down", telemetry.LabelReplicasDown, got)
	}
	if row := lastUp("llama"); row != 1 {
		t.Errorf("model row's share up %v once the down one is gone, want 1 (of the replicas the store knows)", row)
	}
}
