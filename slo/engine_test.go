package slo

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

const stepEvery = 10 * time.Second

func epoch() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// harness plays scripted series into a store and an engine on a fake
// clock, one evaluation per step.
type harness struct {
	t       *testing.T
	store   *telemetry.Store
	eng     *Engine
	now     time.Time
	started bool
}

func newHarness(t *testing.T, objs []Objective, opts Options) *harness {
	t.Helper()
	// Stale as soon as one step is missed, so `_` means stale at once.
	store := telemetry.NewStore(telemetry.StoreConfig{StaleIntervals: 0.5, MinStaleAfter: time.Millisecond})
	eng := New(objs, store, opts)
	if w := eng.Warnings(); len(w) > 0 {
		t.Fatalf("warnings: %v", w)
	}
	return &harness{t: t, store: store, eng: eng, now: epoch()}
}

func (h *harness) observe(o telemetry.Observation) {
	h.store.Observe(o)
	h.eng.Observe(o)
}

// play feeds series for sig on endpoint "ep" and returns one state code
// per step for the named objective: I inactive, P pending, F firing, R
// resolved, N no data, U unknown; "?" marks a pending or firing alert
// whose data is unknown.
func (h *harness) play(sig telemetry.Signal, objective, series string) (string, []Transition) {
	var codes []string
	var trs []Transition
	for _, st := range mustSeries(h.t, series) {
		if h.started {
			h.now = h.now.Add(stepEvery)
		}
		h.started = true
		o := telemetry.Observation{At: h.now, Endpoint: "ep", Signal: sig, Source: "probe:http://ep", Interval: stepEvery}
		switch st.kind {
		case stepValue:
			o.Kind, o.Value = telemetry.KindSample, st.v
			h.observe(o)
		case stepNoData:
			o.Kind = telemetry.KindNoData
			h.observe(o)
		case stepError:
			o.Kind, o.Err = telemetry.KindFailure, "connection refused"
			h.observe(o)
		}
		trs = append(trs, h.eng.Evaluate(h.now)...)
		codes = append(codes, code(h.alert(objective)))
	}
	return strings.Join(codes, " "), trs
}

func (h *harness) alert(objective string) Alert {
	h.t.Helper()
	for _, a := range h.eng.Current() {
		if a.Objective == objective && a.Endpoint == "ep" {
			return a
		}
	}
	h.t.Fatalf("no alert for %s", objective)
	return Alert{}
}

func code(a Alert) string {
	c := map[State]string{Inactive: "I", Pending: "P", Firing: "F", Resolved: "R", NoDataState: "N", UnknownState: "U"}[a.State]
	if (a.State == Pending || a.State == Firing) && !a.UnknownSince.IsZero() {
		c += "?"
	}
	return c
}

func ttftObjective(forDur, keep time.Duration) Objective {
	return Objective{Name: "ttft", Kind: Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5,
		Window: stepEvery, For: forDur, KeepFiringFor: keep}
}

func TestBreachAndRecovery(t *testing.T) {
	h := newHarness(t, []Objective{ttftObjective(20*time.Second, 0)}, Options{})
	got, trs := h.play(telemetry.TTFT, "ttft", "1 1 7x4 1 1")
	if want := "I I P P F F F R R"; got != want {
		t.Fatalf("states %q, want %q", got, want)
	}
	var path []string
	for _, tr := range trs {
		path = append(path, string(tr.From)+">"+string(tr.To))
		if tr.Bell != (tr.To == Firing) {
			t.Errorf("bell %v on %s", tr.Bell, tr.To)
		}
	}
	if want := "inactive>pending pending>firing firing>resolved"; strings.Join(path, " ") != want {
		t.Errorf("transitions %v, want %s", path, want)
	}
	hist := h.eng.History()
	if len(hist) != 1 {
		t.Fatalf("history %d entries, want 1", len(hist))
	}
	a := hist[0]
	start := epoch()
	if !a.ActiveAt.Equal(start.Add(2*stepEvery)) || !a.FiredAt.Equal(start.Add(4*stepEvery)) || !a.ResolvedAt.Equal(start.Add(7*stepEvery)) {
		t.Errorf("times active %v fired %v resolved %v", a.ActiveAt, a.FiredAt, a.ResolvedAt)
	}
	if a.Peak != 7 || a.Threshold != 5 || a.Objective != "ttft" || a.Description != "TTFT p95 ≤ 5s over 10s" {
		t.Errorf("history entry %+v", a)
	}
	if al := h.eng.Alerts(); len(al) != 1 || al[0].State != Resolved {
		t.Errorf("alerts %+v, want the resolved one", al)
	}
	if b := h.eng.Badge("ep", h.now); b != BadgeOK {
		t.Errorf("badge %s after recovery", b)
	}
}

func TestPendingDropsWhenConditionClears(t *testing.T) {
	h := newHarness(t, []Objective{ttftObjective(30*time.Second, 0)}, Options{})
	got, _ := h.play(telemetry.TTFT, "ttft", "9 9 1 9 9 9 9")
	if want := "P P I P P P F"; got != want {
		t.Fatalf("states %q, want %q", got, want)
	}
}

func TestKeepFiringForStopsFlapping(t *testing.T) {
	flapping := "9 1 9 1 9 1 1 1 1"
	h := newHarness(t, []Objective{ttftObjective(0, 30*time.Second)}, Options{})
	got, _ := h.play(telemetry.TTFT, "ttft", flapping)
	if want := "F F F F F F F F R"; got != want {
		t.Errorf("with keep_firing_for: %q, want %q", got, want)
	}
	if n := len(h.eng.History()); n != 1 {
		t.Errorf("%d incidents, want 1", n)
	}

	h = newHarness(t, []Objective{ttftObjective(0, 0)}, Options{})
	got, trs := h.play(telemetry.TTFT, "ttft", flapping)
	if want := "F R F R F R R R R"; got != want {
		t.Errorf("without: %q, want %q", got, want)
	}
	bells := 0
	for _, tr := range trs {
		if tr.Bell {
			bells++
		}
	}
	if bells != 3 {
		t.Errorf("%d bells, want 3", bells)
	}
}

func TestGapsAreNoDataNeverOK(t *testing.T) {
	h := newHarness(t, []Objective{ttftObjective(0, 0)}, Options{})
	// Inactive: no data is its own state, staleness is unknown.
	got, _ := h.play(telemetry.TTFT, "ttft", "1 nodata 1 _ stale 1")
	if want := "I N I U U I"; got != want {
		t.Errorf("inactive gaps %q, want %q", got, want)
	}
	// Firing: a gap never resolves; the alert is firing, unknown since.
	got, _ = h.play(telemetry.TTFT, "ttft", "9 nodatax1 _ 9 1")
	if want := "F F? F? F R"; got != want {
		t.Errorf("firing gaps %q, want %q", got, want)
	}
	a := h.eng.History()[0]
	if a.State != Resolved || !a.UnknownSince.IsZero() {
		t.Errorf("resolved alert %+v", a)
	}
}

func TestSourceErrorKeepsFiringUnknownSince(t *testing.T) {
	h := newHarness(t, []Objective{ttftObjective(0, 0)}, Options{})
	got, trs := h.play(telemetry.TTFT, "ttft", "9 9 error")
	if want := "F F F?"; got != want {
		t.Fatalf("states %q, want %q", got, want)
	}
	a := h.alert("ttft")
	if !a.UnknownSince.Equal(h.now) || !strings.Contains(a.Reason, "connection refused") || a.Data != telemetry.Error {
		t.Errorf("unknown alert %+v", a)
	}
	if a.Value != 9 {
		t.Errorf("value %v: the last figure must stay shown", a.Value)
	}
	if b := h.eng.Badge("ep", h.now); b != BadgeBreach {
		t.Errorf("badge %s, want BREACH while firing", b)
	}
	firstUnknown := a.UnknownSince
	got2, trs2 := h.play(telemetry.TTFT, "ttft", "error error")
	if got2 != "F? F?" || !h.alert("ttft").UnknownSince.Equal(firstUnknown) {
		t.Errorf("still failing: %q, unknown since %v (want %v)", got2, h.alert("ttft").UnknownSince, firstUnknown)
	}
	if len(trs) != 1 || len(trs2) != 0 {
		t.Errorf("transitions %v %v: an error is no transition", trs, trs2)
	}
	got3, _ := h.play(telemetry.TTFT, "ttft", "9 1")
	if got3 != "F R" {
		t.Errorf("after recovery %q", got3)
	}
	// An inactive objective with a failing source says ERROR.
	h.play(telemetry.TTFT, "ttft", "error")
	if b := h.eng.Badge("ep", h.now); b != BadgeError {
		t.Errorf("badge %s, want ERROR", b)
	}
	if al := h.eng.Alerts(); al[0].State != UnknownState {
		t.Errorf("alerts %+v: the unknown one first", al)
	}
}

func TestPendingDuringErrorDoesNotFire(t *testing.T) {
	h := newHarness(t, []Objective{ttftObjective(20*time.Second, 0)}, Options{})
	got, _ := h.play(telemetry.TTFT, "ttft", "9 error error 9")
	if want := "P P? P? F"; got != want {
		t.Errorf("states %q, want %q", got, want)
	}
}

func TestBadges(t *testing.T) {
	objs := []Objective{ttftObjective(20*time.Second, 0)}
	objs[0].Endpoint = "prod-*"
	store := telemetry.NewStore(telemetry.StoreConfig{})
	e := New(objs, store, Options{EvalStaleAfter: time.Minute})
	now := epoch()
	if b := e.Badge("dev-1", now); b != BadgeNone {
		t.Errorf("unmatched endpoint: %s", b)
	}
	if b := e.Badge("prod-1", now); b != BadgeNoData {
		t.Errorf("never evaluated: %s", b)
	}
	obs := func(v float64) {
		o := telemetry.Observation{Kind: telemetry.KindSample, At: now, Endpoint: "prod-1", Signal: telemetry.TTFT, Source: "probe:x", Value: v, Interval: stepEvery}
		store.Observe(o)
		e.Observe(o)
	}
	obs(1)
	e.Evaluate(now)
	if b := e.Badge("prod-1", now); b != BadgeOK {
		t.Errorf("healthy: %s", b)
	}
	if b := e.Badge("prod-1", now.Add(2*time.Minute)); b != BadgeStale {
		t.Errorf("engine not evaluated for 2m: %s", b)
	}
	now = now.Add(stepEvery)
	obs(9)
	e.Evaluate(now)
	if b := e.Badge("prod-1", now); b != BadgePending {
		t.Errorf("pending: %s", b)
	}
	now = now.Add(time.Minute) // stale store data: no probe for a minute
	e.Evaluate(now)
	if b := e.Badge("prod-1", now); b != BadgePending {
		t.Errorf("pending stays pending on stale data: %s", b)
	}
	if b := e.Badge("dev-1", now); b != BadgeNone {
		t.Errorf("unmatched endpoint after discovery: %s", b)
	}
}

func TestErrorRateObjective(t *testing.T) {
	obj := Objective{Name: "errors", Kind: ErrorRate, Threshold: 0.2, Window: time.Minute}
	h := newHarness(t, []Objective{obj}, Options{})
	// probe_success samples: 1 good, 0 failed; the store derives the rate.
	got, _ := h.play(telemetry.ProbeSuccess, "errors", "1 1 1 0 0 0 1")
	// Window 1 m = 6 steps: rates 0, 0, 0, .25, .4, .5, .5 (> 0.2 fires).
	if want := "I I I F F F F"; got != want {
		t.Errorf("states %q, want %q", got, want)
	}
	if a := h.alert("errors"); a.Value != 0.5 || a.Count != 6 {
		t.Errorf("value %v over %v probes, want 0.5 over 6", a.Value, a.Count)
	}
}

func TestAlertsOrderAndHistoryBound(t *testing.T) {
	objs := []Objective{ttftObjective(0, 0), ttftObjective(time.Hour, 0), ttftObjective(0, 0)}
	objs[1].Name, objs[2].Name, objs[2].Signal = "ttft-slow", "tpot", telemetry.TPOT
	h := newHarness(t, objs, Options{History: 2})
	h.play(telemetry.TTFT, "ttft", "9 1 9 1 9 1 9")
	if n := len(h.eng.History()); n != 3 { // one firing + 2 kept of 3 resolved
		t.Errorf("history %d entries, want 3 (bounded)", n)
	}
	var states []string
	for _, a := range h.eng.Alerts() {
		states = append(states, a.Objective+":"+string(a.State))
	}
	want := "ttft:firing ttft-slow:pending tpot:no_data ttft:resolved ttft:resolved"
	if strings.Join(states, " ") != want {
		t.Errorf("alerts %v\nwant %s", states, want)
	}
}

func TestInvalidObjectivesAreReported(t *testing.T) {
	e := New([]Objective{
		{Name: "bad", Kind: Percentile, Signal: telemetry.TTFT, Threshold: -1},
		ttftObjective(0, 0), ttftObjective(0, 0),
		{Kind: Ratio, Signal: telemetry.TTFT, Threshold: 5, Target: 0.9},
	}, nil, Options{})
	w := strings.Join(e.Warnings(), "\n")
	for _, want := range []string{"objective bad", "ttft-2", "can never fire"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if n := len(e.Objectives()); n != 3 {
		t.Errorf("%d objectives kept, want 3", n)
	}
}

func TestMaxRules(t *testing.T) {
	e := New([]Objective{ttftObjective(0, 0)}, nil, Options{MaxRules: 2})
	for _, ep := range []string{"a", "b", "c", "c", "d"} {
		e.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: ep, Signal: telemetry.TTFT, Value: 1})
	}
	if n := len(e.Current()); n != 2 {
		t.Errorf("%d rules, want 2", n)
	}
	if w := e.Warnings(); len(w) != 1 || !strings.Contains(w[0], "2 endpoints") {
		t.Errorf("warnings %v", w)
	}
}

func TestConcurrentUse(t *testing.T) {
	store := telemetry.NewStore(telemetry.StoreConfig{})
	objs := append(DefaultObjectives(), Objective{Kind: Ratio, Signal: telemetry.TTFT, Threshold: 5, Target: 0.99})
	e := New(objs, store, Options{})
	sink := telemetry.Tee{store, e}
	var wg sync.WaitGroup
	now := epoch()
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				at := now.Add(time.Duration(i) * time.Second)
				sink.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: string(rune('a' + g)),
					Signal: telemetry.TTFT, Source: "probe:x", Value: float64(i % 7)})
				if i%10 == 0 {
					e.Evaluate(at)
					e.Alerts()
					e.Badge("a", at)
					e.History()
				}
			}
		}()
	}
	wg.Wait()
	if n := len(e.Current()); n != 16 { // 2 percentile + ratio page + ratio ticket, × 4
		t.Errorf("%d rules, want 16", n)
	}
}
