package slo

import (
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// TestTargetUp: a replica whose target is down for the objective's For
// fires at page severity; its model row warns while one of two replicas
// is down and pages once none is up; back up, both resolve. An endpoint
// without target health gets no target_up rule.
func TestTargetUp(t *testing.T) {
	store := telemetry.NewStore(telemetry.StoreConfig{})
	e := New([]Objective{TargetUpObjective()}, store, Options{})
	t0 := time.Unix(1_700_000_000, 0)
	feed := func(o telemetry.Observation) {
		o.Source = "promql:http://p"
		store.Observe(o)
		e.Observe(o)
	}
	announce := func(info telemetry.Endpoint) {
		feed(telemetry.Observation{Kind: telemetry.KindEndpoint, At: t0, Endpoint: info.Name, Info: &info})
	}
	up := func(at time.Time, name string, v float64) {
		feed(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: name, Signal: telemetry.TargetUp, Value: v, Interval: time.Second})
	}
	announce(telemetry.Endpoint{Name: "m", Model: "m", Aggregate: true})
	announce(telemetry.Endpoint{Name: "a/m", Model: "m", Group: "m", Replica: "a"})
	announce(telemetry.Endpoint{Name: "b/m", Model: "m", Group: "m", Replica: "b"})
	announce(telemetry.Endpoint{Name: "probed", Model: "p"})
	state := func(endpoint, severity string) State {
		for _, a := range e.Current() {
			if a.Endpoint == endpoint && a.Kind == TargetUp && a.Severity == severity {
				return a.State
			}
		}
		return ""
	}
	step := func(at time.Time, a, b float64) {
		up(at, "a/m", a)
		up(at, "b/m", b)
		up(at, "m", (a+b)/2)
		e.Evaluate(at)
	}
	for i := range 5 {
		step(t0.Add(time.Duration(i)*time.Second), 1, 1)
	}
	if got := state("a/m", "page"); got != Inactive {
		t.Fatalf("replica up: %q, want inactive", got)
	}
	if got := state("probed", "page"); got != "" {
		t.Errorf("an endpoint without target health has a target_up rule (%s)", got)
	}
	down := t0.Add(10 * time.Second)
	for s := time.Duration(0); s <= 70*time.Second; s += time.Second {
		step(down.Add(s), 1, 0)
		if s < DefaultTargetUpFor && state("b/m", "page") == Firing {
			t.Fatalf("b/m fired %s after it went down, before For %s", s, DefaultTargetUpFor)
		}
	}
	for _, c := range []struct {
		endpoint, severity string
		want               State
	}{{"b/m", "page", Firing}, {"a/m", "page", Inactive}, {"m", "warning", Firing}, {"m", "page", Inactive}} {
		if got := state(c.endpoint, c.severity); got != c.want {
			t.Errorf("one replica down for 70s: %s %s is %q, want %q", c.endpoint, c.severity, got, c.want)
		}
	}
	none := down.Add(71 * time.Second)
	for s := time.Duration(0); s <= 61*time.Second; s += time.Second {
		step(none.Add(s), 0, 0)
	}
	if got := state("m", "page"); got != Firing {
		t.Errorf("no replica up for 61s: the model row's page is %q, want firing", got)
	}
	back := none.Add(62 * time.Second)
	step(back, 1, 1)
	for _, c := range []struct{ endpoint, severity string }{{"b/m", "page"}, {"a/m", "page"}, {"m", "warning"}, {"m", "page"}} {
		if got := state(c.endpoint, c.severity); got == Firing || got == Pending {
			t.Errorf("all up again: %s %s is %q, want resolved or inactive", c.endpoint, c.severity, got)
		}
	}
}

// An objective with nothing to judge on a replica whose target is down
// says why, as the store knows it, not only "data stale".
func TestMissingDataSaysTargetDown(t *testing.T) {
	store := telemetry.NewStore(telemetry.StoreConfig{})
	e := New([]Objective{{Name: "tps", Kind: Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 1}}, store, Options{})
	t0 := time.Unix(1_700_000_000, 0)
	since := t0.Add(3 * time.Second)
	obs := []telemetry.Observation{
		{Kind: telemetry.KindEndpoint, At: t0, Endpoint: "a", Info: &telemetry.Endpoint{Name: "a"}},
		{Kind: telemetry.KindSample, At: t0, Endpoint: "a", Signal: telemetry.TTFT, Value: 0.5, Interval: time.Second},
		{Kind: telemetry.KindEndpoint, At: since, Endpoint: "a", Info: &telemetry.Endpoint{Name: "a", Labels: map[string]string{
			telemetry.LabelTarget: telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetDown, Since: since, Reason: "scrape failed: connection refused"})}}},
	}
	for _, o := range obs {
		o.Source = "scrape:http://a/metrics"
		store.Observe(o)
		e.Observe(o)
	}
	e.Evaluate(t0.Add(time.Minute))
	for _, a := range e.Current() {
		if !strings.Contains(a.Reason, "target down since") || !strings.Contains(a.Reason, "connection refused") {
			t.Errorf("%s on %s: %s, reason %q; want the target's state and reason", a.Objective, a.Endpoint, a.State, a.Reason)
		}
	}
}

// A probed endpoint's scrape target down is a warning, whichever came first
// (the probe or the scrape): its availability objective pages for the
// outage, so one dead server is one page, not two.
func TestTargetUpOfAProbedEndpointWarns(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, probeFirst := range []bool{true, false} {
		store := telemetry.NewStore(telemetry.StoreConfig{})
		e := New([]Objective{TargetUpObjective(), AvailabilityObjective()}, store, Options{})
		feed := func(o telemetry.Observation) {
			store.Observe(o)
			e.Observe(o)
		}
		info := telemetry.Endpoint{Name: "host:8000/m", Model: "m"}
		feed(telemetry.Observation{Kind: telemetry.KindEndpoint, At: t0, Endpoint: info.Name, Info: &info, Source: "scrape:http://host:8000/metrics"})
		up := telemetry.Observation{Kind: telemetry.KindSample, At: t0, Endpoint: info.Name, Signal: telemetry.TargetUp, Value: 1,
			Interval: time.Second, Source: "scrape:http://host:8000/metrics"}
		tee := telemetry.Tee{store, e}
		if probeFirst {
			probeResult(tee, info.Name, t0, true, time.Second)
			feed(up)
		} else {
			feed(up)
			probeResult(tee, info.Name, t0, true, time.Second)
		}
		e.Evaluate(t0)
		var sev []string
		for _, a := range e.Current() {
			if a.Kind == TargetUp {
				sev = append(sev, a.Severity)
			}
		}
		if len(sev) != 1 || sev[0] != "warning" {
			t.Errorf("probe first %v: target-up severities %v, want [warning]", probeFirst, sev)
		}
	}
}
