package scrape

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// TestTargetDownAfterItWorked: a target whose scrapes worked and now fail
// is down: TargetUp 0 and its endpoints labelled "down since" the first
// failed scrape, with the scrape's error; the next good scrape says up and
// takes the label back. A target that never answered is not called down
// (nothing was ever up).
func TestTargetDownAfterItWorked(t *testing.T) {
	tg := newTarget(t, goodPage)
	c := &collector{}
	clock := time.Unix(2_000_000, 0)
	s := New(Config{URL: tg.URL, Interval: time.Second, Now: func() time.Time { return clock }}, c)
	scrape := func() []telemetry.Observation {
		t.Helper()
		_ = s.ScrapeOnce(context.Background()) // failures are what is tested
		clock = clock.Add(time.Second)
		return c.Take()
	}
	obs := scrape()
	names := endpoints(obs)
	if len(names) == 0 {
		t.Fatalf("no endpoint from the good page:\n%s", dump(obs))
	}
	name := names[0]
	if up := one(t, obs, telemetry.KindSample, name, telemetry.TargetUp); up.Value != 1 {
		t.Errorf("target up %v after a good scrape, want 1", up.Value)
	}
	tg.set("garbage{\n")
	firstFail := clock
	scrape()
	obs = scrape()
	if up := one(t, obs, telemetry.KindSample, name, telemetry.TargetUp); up.Value != 0 {
		t.Errorf("target up %v after failed scrapes, want 0", up.Value)
	}
	var h telemetry.TargetHealth
	var down bool
	for _, o := range find(obs, telemetry.KindEndpoint, name, "") {
		h, down = o.Info.Target()
	}
	if !down || h.State != telemetry.TargetDown || !h.Since.Equal(firstFail) || !strings.HasPrefix(h.Reason, "scrape failed: ") {
		t.Errorf("target %+v (labelled %v), want down since the first failed scrape %s with its error", h, down, firstFail)
	}
	tg.set(goodPage)
	obs = scrape()
	if up := one(t, obs, telemetry.KindSample, name, telemetry.TargetUp); up.Value != 1 {
		t.Errorf("target up %v once it answers again, want 1", up.Value)
	}
	for _, o := range find(obs, telemetry.KindEndpoint, name, "") {
		if v, ok := o.Info.Labels[telemetry.LabelTarget]; !ok || v != "" {
			t.Errorf("target label %q (set %v) once up, want it taken back (empty)", v, ok)
		}
	}

	never := &collector{}
	closed := New(Config{URL: "http://127.0.0.1:1", Interval: time.Second}, never)
	_ = closed.ScrapeOnce(context.Background())
	for _, o := range never.Take() {
		if o.Signal == telemetry.TargetUp || o.Kind == telemetry.KindEndpoint {
			t.Errorf("a target that never answered: %s %s %s, want no target health", o.Kind, o.Endpoint, o.Signal)
		}
	}
}
