package slo

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// probeResult is what a probe runner emits for one result: probe_success
// and, for a failure, a failure on every probe signal.
func probeResult(sink telemetry.Sink, endpoint string, at time.Time, ok bool, interval time.Duration) {
	src := "probe:http://" + endpoint
	v := 0.0
	if ok {
		v = 1
		sink.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: endpoint, Signal: telemetry.TTFT, Source: src, Value: 0.1, Interval: interval})
	}
	sink.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: endpoint, Signal: telemetry.ProbeSuccess, Source: src, Value: v, Interval: interval})
	if !ok {
		sink.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: at, Endpoint: endpoint, Source: src, Err: "connect: connection refused", Interval: interval})
	}
}

func availabilityEngine(t *testing.T) (*telemetry.Store, *Engine, telemetry.Tee) {
	t.Helper()
	// What the commands run with when no --slo-* flag is given.
	objs := append(DefaultObjectives(), AvailabilityObjective())
	for i := range objs {
		objs[i] = objs[i].WithDefaults()
	}
	st := telemetry.NewStore(telemetry.StoreConfig{})
	e := New(objs, st, Options{})
	return st, e, telemetry.Tee{st, e}
}

// A dead endpoint fires within 60 s of its death at the probe intervals
// people use, with the default objectives, and resolves with an entry
// once probes succeed again.
func TestDeadEndpointFiresWithinAMinute(t *testing.T) {
	for _, interval := range []time.Duration{2 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second} {
		t.Run(interval.String(), func(t *testing.T) {
			_, e, sink := availabilityEngine(t)
			start := epoch()
			death := start.Add(5 * time.Minute)
			var firedAt, resolvedAt time.Time
			for now := start; now.Before(death.Add(10 * time.Minute)); now = now.Add(time.Second) {
				if now.Sub(start)%interval == 0 {
					dead := !now.Before(death) && now.Before(death.Add(5*time.Minute))
					probeResult(sink, "ep", now, !dead, interval)
				}
				for _, tr := range e.Evaluate(now) {
					if tr.Alert.Objective != "availability" {
						continue
					}
					switch tr.To {
					case Firing:
						firedAt = now
						if now.Before(death) {
							t.Fatalf("fired while healthy at %v", now.Sub(start))
						}
					case Resolved:
						resolvedAt = now
					}
				}
			}
			if firedAt.IsZero() || firedAt.Sub(death) > time.Minute {
				t.Fatalf("fired %v after the death, want within 1m", firedAt.Sub(death))
			}
			back := death.Add(5 * time.Minute)
			if resolvedAt.Before(back) || resolvedAt.Sub(back) > time.Minute {
				t.Errorf("resolved %v after recovery", resolvedAt.Sub(back))
			}
			h := e.History()
			if len(h) != 1 || h[0].State != Resolved || h[0].Objective != "availability" {
				t.Errorf("history %+v", h)
			}
			t.Logf("interval %v: firing %v after the death, resolved %v after recovery", interval, firedAt.Sub(death), resolvedAt.Sub(back))
		})
	}
}

// One failed probe among healthy ones is not an outage.
func TestSingleFailedProbeDoesNotFire(t *testing.T) {
	_, e, sink := availabilityEngine(t)
	start := epoch()
	for i := 0; i < 60; i++ {
		now := start.Add(time.Duration(i) * 10 * time.Second)
		probeResult(sink, "ep", now, i != 20, 10*time.Second)
		for _, tr := range e.Evaluate(now) {
			if tr.Alert.Objective == "availability" && tr.To != Inactive {
				t.Fatalf("%v at probe %d", tr.To, i)
			}
		}
	}
}

// An endpoint that only a scrape or PromQL feeds has no availability
// rule: the objective judges ttftop's own probes.
func TestAvailabilityOnlyForProbedEndpoints(t *testing.T) {
	_, e, sink := availabilityEngine(t)
	now := epoch()
	sink.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, At: now, Endpoint: "scraped", Signal: telemetry.TTFT,
		Source: "scrape:http://x", Buckets: []telemetry.Bucket{{UpperBound: 1, Count: 1}, {UpperBound: inf(), Count: 1}}, Interval: time.Second})
	probeResult(sink, "probed", now, false, time.Second)
	e.Evaluate(now)
	for _, a := range e.Current() {
		if a.Objective == "availability" && a.Endpoint != "probed" {
			t.Errorf("availability rule on %s", a.Endpoint)
		}
	}
	if a := find(e.Current(), "availability", "probed"); a == nil || a.State != Firing {
		t.Errorf("probed endpoint failing every probe: %+v", a)
	}
}

// A retired endpoint's firing alert resolves, with its reason, and the
// endpoint is gone from the store.
func TestRetireResolvesFiringAlerts(t *testing.T) {
	st, e, sink := availabilityEngine(t)
	now := epoch()
	probeResult(sink, "host:8000", now, false, time.Second)
	if trs := e.Evaluate(now); len(trs) == 0 || find(e.Current(), "availability", "host:8000").State != Firing {
		t.Fatalf("placeholder should fire: %+v", e.Current())
	}
	later := now.Add(3 * time.Second)
	sink.Observe(telemetry.Observation{Kind: telemetry.KindRetire, At: later, Endpoint: "host:8000", Err: "reachable: probed per model"})
	trs := e.Evaluate(later)
	if len(trs) != 1 || trs[0].From != Firing || trs[0].To != Resolved || trs[0].Alert.Reason != "reachable: probed per model" {
		t.Fatalf("transitions %+v", trs)
	}
	if len(e.Current()) != 0 || len(st.EndpointNames()) != 0 {
		t.Errorf("retired endpoint still there: %+v %v", e.Current(), st.EndpointNames())
	}
	if h := e.History(); len(h) != 1 || h[0].ResolvedAt != later {
		t.Errorf("history %+v", h)
	}
}

func inf() float64 { return math.Inf(1) }

func find(as []Alert, objective, endpoint string) *Alert {
	for i := range as {
		if as[i].Objective == objective && as[i].Endpoint == endpoint {
			return &as[i]
		}
	}
	return nil
}

// A resolved alert is listed as resolved for ResolvedFor, then inactive
// again; the episode stays in the history.
func TestResolvedBecomesInactiveAgain(t *testing.T) {
	_, e, sink := availabilityEngine(t)
	start := epoch()
	var resolvedAt time.Time
	for now := start; now.Before(start.Add(20 * time.Minute)); now = now.Add(time.Second) {
		probeResult(sink, "ep", now, now.Sub(start) >= time.Minute, time.Second) // dead for the first minute
		for _, tr := range e.Evaluate(now) {
			if tr.To == Resolved {
				resolvedAt = now
			}
		}
		if a := find(e.Current(), "availability", "ep"); !resolvedAt.IsZero() && now.Sub(resolvedAt) < 15*time.Minute && a.State != Resolved {
			t.Fatalf("%v after resolving: %s, want resolved", now.Sub(resolvedAt), a.State)
		}
	}
	if a := find(e.Current(), "availability", "ep"); resolvedAt.IsZero() || a.State != Inactive {
		t.Errorf("20 min later: %+v", a)
	}
	if h := e.History(); len(h) != 1 || h[0].State != Resolved {
		t.Errorf("history %+v", h)
	}
}

// An availability alert never starts once the endpoint answers again: after
// a short outage the window's share of failures can still rise as healthy
// probes leave it (3 of 6 → 3 of 5), which paged, 1–2 s at a time, after
// the endpoint was back, or between probes. For every outage length and
// probe phase: an alert starts only as a failed probe arrives, never after
// the first successful probe, at most one episode per outage, and an
// outage long enough to fail most of a window still fires while it lasts.
func TestOutageNeverPagesAfterRecovery(t *testing.T) {
	const interval = 10 * time.Second
	for outage := 10 * time.Second; outage <= 90*time.Second; outage += 10 * time.Second {
		for phase := time.Duration(0); phase < interval; phase += time.Second {
			_, e, sink := availabilityEngine(t)
			start := epoch()
			down := start.Add(3*time.Minute + phase)
			// A probe starts an interval after the last one ended, so
			// they are 10–11.8 s apart (a streamed answer takes a while):
			// the window holds five or six of them.
			next, k := start, 0
			var back, lastProbe time.Time // the first successful probe after the outage; the newest
			firings, firedDuring := 0, false
			for now := start; now.Before(down.Add(5 * time.Minute)); now = now.Add(100 * time.Millisecond) {
				if !now.Before(next) {
					dead := !now.Before(down) && now.Before(down.Add(outage))
					probeResult(sink, "ep", now, !dead, interval)
					lastProbe = now
					if !dead && back.IsZero() && now.After(down) {
						back = now
					}
					k++
					next = now.Add(interval + time.Duration(k*7%10)*200*time.Millisecond)
				}
				if now.Sub(start)%time.Second != 0 {
					continue
				}
				for _, tr := range e.Evaluate(now) {
					if tr.Alert.Objective != "availability" || tr.To != Firing {
						continue
					}
					firings++
					if now.Sub(lastProbe) >= time.Second {
						t.Errorf("outage %v, phase %v: fired %v after the newest probe, with no probe since the last evaluation: a healthy probe leaving the window started it",
							outage, phase, now.Sub(lastProbe))
					}
					if !back.IsZero() {
						t.Errorf("outage %v, phase %v: fired %v after the endpoint answered again", outage, phase, now.Sub(back))
					}
					firedDuring = true
				}
			}
			if firings > 1 {
				t.Errorf("outage %v, phase %v: %d firing episodes, want at most one", outage, phase, firings)
			}
			if outage >= 60*time.Second && !firedDuring {
				t.Errorf("outage %v, phase %v: never fired during the outage", outage, phase)
			}
		}
	}
}

// Every alert names the base unit of its value and threshold, so that a
// consumer of the JSON (--on-alert, snapshot) can read 0.602 as seconds.
func TestAlertsNameTheirUnit(t *testing.T) {
	objs := []Objective{
		{Kind: Percentile, Signal: telemetry.TTFT, Threshold: 5},
		{Kind: ErrorRate, Threshold: 0.01},
		{Kind: Ratio, Signal: telemetry.TTFT, Threshold: 5, Target: 0.99},
		AvailabilityObjective(),
	}
	for i := range objs {
		objs[i] = objs[i].WithDefaults()
	}
	st := telemetry.NewStore(telemetry.StoreConfig{})
	e := New(objs, st, Options{})
	probeResult(telemetry.Tee{st, e}, "ep", epoch(), false, 10*time.Second) // every alert active: firing, no data or unknown
	e.Evaluate(epoch())
	want := map[Kind]string{Percentile: "s", ErrorRate: "ratio", Ratio: "burn_rate", Availability: "ratio"}
	seen := map[Kind]bool{}
	for _, a := range e.Alerts() {
		seen[a.Kind] = true
		if a.Unit != want[a.Kind] {
			t.Errorf("%s alert: unit %q, want %q", a.Kind, a.Unit, want[a.Kind])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("alerts of kinds %v, want one of each of %v", seen, want)
	}
}

// An availability alert that resolved and then loses its data (the server
// stops answering: SIGSTOP, probes time out without results) is unknown
// from that moment: the row claims no episode "since" the old start and no
// peak of an episode that ended (QA M3: "UNKNOWN since 03:01:46 … peak
// 100%" beside the RESOLVED row of the same episode).
func TestResolvedThenUnknownCarriesNoOldEpisode(t *testing.T) {
	_, e, sink := availabilityEngine(t)
	const interval = 2 * time.Second
	start := epoch()
	death, back := start.Add(time.Minute), start.Add(3*time.Minute)
	var resolvedAt time.Time
	now := start
	for ; resolvedAt.IsZero() || now.Before(resolvedAt.Add(10*time.Second)); now = now.Add(interval) {
		if now.After(start.Add(10 * time.Minute)) {
			t.Fatal("never resolved")
		}
		probeResult(sink, "ep", now, now.Before(death) || !now.Before(back), interval)
		for _, tr := range e.Evaluate(now) {
			if tr.Alert.Objective == "availability" && tr.To == Resolved {
				resolvedAt = now
			}
		}
	}
	// The server freezes: no probe reports at all, so the data goes stale.
	stoppedAt := now
	var unknownAt time.Time
	for ; now.Before(stoppedAt.Add(time.Minute)) && unknownAt.IsZero(); now = now.Add(time.Second) {
		for _, tr := range e.Evaluate(now) {
			if tr.Alert.Objective == "availability" && tr.To == UnknownState {
				if tr.From != Resolved {
					t.Errorf("unknown from %v, want from resolved", tr.From)
				}
				unknownAt = now
				a := tr.Alert
				if !a.ActiveAt.IsZero() || !a.FiredAt.IsZero() || !a.ResolvedAt.IsZero() || a.Peak != 0 {
					t.Errorf("unknown transition carries the ended episode: active %v fired %v resolved %v peak %v",
						a.ActiveAt, a.FiredAt, a.ResolvedAt, a.Peak)
				}
			}
		}
	}
	if unknownAt.IsZero() {
		t.Fatal("never unknown after the data stopped")
	}
	a := find(e.Alerts(), "availability", "ep")
	if a == nil || a.State != UnknownState {
		t.Fatalf("alerts list: %+v, want the unknown row first", a)
	}
	if !a.UnknownSince.Equal(unknownAt) || !a.ActiveAt.IsZero() || !a.FiredAt.IsZero() || !a.ResolvedAt.IsZero() || a.Peak != 0 {
		t.Errorf("unknown row: unknown since %v (want %v), active %v, fired %v, resolved %v, peak %v: want only the unknown start",
			a.UnknownSince, unknownAt, a.ActiveAt, a.FiredAt, a.ResolvedAt, a.Peak)
	}
	// Snapshots and recordings write the row as JSON: no stale start there.
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"active_at"`, `"fired_at"`, `"resolved_at"`, `"peak"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("unknown row's JSON has %s of the ended episode: %s", key, b)
		}
	}
	// The ended episode is still told once, as resolved, with its figures.
	h := e.History()
	if len(h) != 1 || h[0].State != Resolved || !h[0].ResolvedAt.Equal(resolvedAt) || h[0].Peak != 1 || h[0].ActiveAt.IsZero() {
		t.Errorf("history %+v, want the episode resolved at %v with peak 100%%", h, resolvedAt)
	}
	// Probes come back failing again: a new episode, starting now.
	again := now.Add(interval)
	for ; now.Before(again.Add(time.Minute)); now = now.Add(interval) {
		probeResult(sink, "ep", now, false, interval)
		e.Evaluate(now)
	}
	if a := find(e.Current(), "availability", "ep"); a == nil || a.State != Firing || a.ActiveAt.Before(again) {
		t.Errorf("after the second outage: %+v, want firing since %v", a, again)
	}
}
