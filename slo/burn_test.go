package slo

import (
	"math"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

func ttftRatio(period time.Duration) Objective {
	return Objective{Name: "ttft-99", Kind: Ratio, Signal: telemetry.TTFT, Threshold: 5, Target: 0.99, Period: period}
}

func sample(at time.Time, v float64) telemetry.Observation {
	return telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: "ep", Signal: telemetry.TTFT,
		Source: "probe:http://ep", Value: v, Interval: stepEvery}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// drive sends one probe every 10 s from start for d, bad when bad(i), and
// evaluates every 30 s; it returns the first transition to firing of the
// given severity ("" = any).
func drive(e *Engine, start time.Time, d time.Duration, severity string, bad func(i int) bool) (time.Time, *Transition) {
	now := start
	for i := 0; now.Sub(start) < d; i++ {
		now = start.Add(time.Duration(i) * stepEvery)
		v := 1.0
		if bad(i) {
			v = 9
		}
		e.Observe(sample(now, v))
		if i%3 == 0 {
			for _, tr := range e.Evaluate(now) {
				if tr.To == Firing && (severity == "" || tr.Alert.Severity == severity) {
					return now, &tr
				}
			}
		}
	}
	return now, nil
}

func TestFastBurnFiresWithinExpectedTime(t *testing.T) {
	e := New([]Objective{ttftRatio(30 * 24 * time.Hour)}, nil, Options{})
	// Seven hours of good traffic fill every window up to 6 h.
	end, tr := drive(e, epoch(), 7*time.Hour, "", func(int) bool { return false })
	if tr != nil {
		t.Fatalf("fired on good traffic: %+v", tr)
	}
	// 100 % errors at a 99 % target burn 100×. The 1 h window crosses
	// 14.4× when bad/360 > 0.144: after 8.64 min (workbook: time to fire =
	// (1 − SLO)/error ratio × window × burn rate). The 6 h pair needs 21.6.
	// The 1× ticket, its 3 d window holding only 7 h, fires first: its own
	// alert, so the page is a new notification.
	start := end.Add(stepEvery)
	at, tr := drive(e, start, time.Hour, "page", func(int) bool { return true })
	if tr == nil {
		t.Fatal("never fired")
	}
	if tk := e.Alerts(); len(tk) != 2 || tk[0].Severity != "ticket" || tk[0].State != Firing || !tk[0].FiredAt.Before(at) {
		t.Errorf("alerts %+v: want the ticket firing before the page", tk)
	}
	took := at.Sub(start)
	if took < 8*time.Minute+20*time.Second || took > 9*time.Minute+30*time.Second {
		t.Errorf("fired after %v, want about 8.64 min", took)
	}
	a := tr.Alert
	if a.Threshold != 14.4 || a.Severity != "page" || a.Value <= 14.4 || !tr.Bell {
		t.Errorf("fired by %v× (%s), value %v; want the 14.4× page", a.Threshold, a.Severity, a.Value)
	}
	if len(a.BurnRates) != 4 || a.BurnRates[1].Window != 5*time.Minute || !near(a.BurnRates[1].Rate, 100) {
		t.Errorf("burn rates %+v", a.BurnRates)
	}
}

func TestSlowBurnNeverPages(t *testing.T) {
	e := New([]Objective{ttftRatio(30 * 24 * time.Hour)}, nil, Options{})
	// 0.5 % errors against a 99 % target is a burn rate of 0.5: within
	// budget, no rule may fire.
	end, tr := drive(e, epoch(), 8*time.Hour+20*time.Minute-stepEvery, "", func(i int) bool { return i%200 == 199 })
	if tr != nil {
		t.Fatalf("fired at %v: %+v", tr.At, tr.Alert)
	}
	e.Evaluate(end)
	a := e.Current()[0]
	if a.State != Inactive || a.BudgetRemaining == nil || !near(*a.BudgetRemaining, 0.5) || a.Count != 3000 {
		t.Errorf("state %s, budget %v over %v events; want inactive, 0.5 left of 3000", a.State, a.BudgetRemaining, a.Count)
	}
}

func TestBudgetMaths(t *testing.T) {
	obj := ttftRatio(time.Hour)
	obj.BurnWindows = []BurnWindow{{Factor: 2, Long: time.Hour, Short: 10 * time.Minute}}
	e := New([]Objective{obj}, nil, Options{})
	t0 := epoch()
	// 1000 probes, one every 3 s, the first five too slow.
	for i := 1; i <= 1000; i++ {
		v := 1.0
		if i <= 5 {
			v = 6
		}
		e.Observe(sample(t0.Add(time.Duration(3*i)*time.Second), v))
	}
	now := t0.Add(3000 * time.Second)
	e.Evaluate(now)
	a := e.Current()[0]
	// Error ratio 5/1000 = 0.5 %, budget 1 %: burn 0.5, half the budget
	// left. The last 10 minutes (200 probes) were all good.
	if !near(*a.BudgetRemaining, 0.5) || !near(a.BurnRates[0].Rate, 0.5) || a.BurnRates[1].Rate != 0 || a.State != Inactive {
		t.Fatalf("budget %v, burn %+v, state %s", *a.BudgetRemaining, a.BurnRates, a.State)
	}
	// Twenty slow probes in the next minute: 25 bad of 1020. Burn over
	// 1 h = (25/1020)/0.01 = 2.4510, over 10 m = (20/200)/0.01 = 10: both
	// over 2×, so it fires; the budget is overspent: 1 − 2.4510 = −1.4510.
	for k := 1; k <= 20; k++ {
		e.Observe(sample(now.Add(time.Duration(3*k)*time.Second), 6))
	}
	now = now.Add(60 * time.Second)
	trs := e.Evaluate(now)
	a = e.Current()[0]
	wantBurn := 25.0 / 1020 / 0.01
	if len(trs) != 1 || a.State != Firing || !near(a.Value, wantBurn) || a.Threshold != 2 {
		t.Errorf("state %s value %v threshold %v, want firing at %v over 2", a.State, a.Value, a.Threshold, wantBurn)
	}
	if !near(a.BurnRates[1].Rate, 10) || !near(*a.BudgetRemaining, 1-wantBurn) {
		t.Errorf("short burn %v budget %v", a.BurnRates[1].Rate, *a.BudgetRemaining)
	}
}

func TestHistogramGoodEvents(t *testing.T) {
	buckets := []telemetry.Bucket{{UpperBound: 0.1, Count: 10}, {UpperBound: 0.5, Count: 50},
		{UpperBound: 1, Count: 80}, {UpperBound: math.Inf(1), Count: 100}}
	for _, tc := range []struct {
		threshold, good float64
		approx          bool
	}{
		{0.5, 0.50, false}, // a bucket edge: exact
		{0.75, 0.65, true}, // between 0.5 and 1: 50 + 30 × 0.5, interpolated
		{2, 0.80, true},    // beyond the last finite edge: only what is known
	} {
		obj := Objective{Name: "ttft", Kind: Ratio, Signal: telemetry.TTFT, Threshold: tc.threshold, Target: 0.9, Period: time.Hour}
		e := New([]Objective{obj}, nil, Options{})
		now := epoch()
		e.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, At: now, Endpoint: "ep", Signal: telemetry.TTFT,
			Source: "scrape:http://ep/metrics", Buckets: buckets, Interval: 5 * time.Second})
		res := e.Check(now)
		if len(res) != 1 || !res[0].Measured {
			t.Fatalf("threshold %v: %+v", tc.threshold, res)
		}
		r := res[0]
		if !near(*r.Value, tc.good) || r.Approx != tc.approx || r.Count != 100 || r.Pass || r.Source != "scrape" {
			t.Errorf("threshold %v: good %v approx %v count %v pass %v; want %v %v 100 false",
				tc.threshold, *r.Value, r.Approx, r.Count, r.Pass, tc.good, tc.approx)
		}
	}
}

func TestFailedProbeIsOneBadEvent(t *testing.T) {
	e := New([]Objective{ttftRatio(time.Hour)}, nil, Options{})
	now := epoch()
	e.Observe(sample(now, 1))
	fail := now.Add(stepEvery)
	// One failed probe reported twice: probe_success 0 and a failure.
	e.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: fail, Endpoint: "ep", Signal: telemetry.ProbeSuccess, Source: "probe:http://ep", Value: 0})
	e.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: fail, Endpoint: "ep", Source: "probe:http://ep", Err: "503"})
	r := e.Check(fail)[0]
	if !near(*r.Value, 0.5) || r.Count != 2 || r.Data != telemetry.Live {
		t.Errorf("good share %v of %v events (%s); want 0.5 of 2, live", *r.Value, r.Count, r.Data)
	}
}

func TestScrapeErrorKeepsRatioAlertFiring(t *testing.T) {
	obj := ttftRatio(time.Hour)
	obj.BurnWindows = []BurnWindow{{Factor: 2, Long: 10 * time.Minute, Short: time.Minute}}
	store := telemetry.NewStore(telemetry.StoreConfig{})
	e := New([]Objective{obj}, store, Options{})
	now := epoch()
	hist := func(at time.Time, good, total float64) telemetry.Observation {
		return telemetry.Observation{Kind: telemetry.KindHistogram, At: at, Endpoint: "ep", Signal: telemetry.TTFT,
			Source: "scrape:http://ep/metrics", Interval: 5 * time.Second,
			Buckets: []telemetry.Bucket{{UpperBound: 5, Count: good}, {UpperBound: math.Inf(1), Count: total}}}
	}
	e.Observe(hist(now, 50, 100))
	e.Evaluate(now)
	if b := e.Badge("ep", now); b != BadgeBreach {
		t.Fatalf("badge %s, want BREACH at 50%% slow", b)
	}
	now = now.Add(5 * time.Second)
	e.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: now, Endpoint: "ep", Source: "scrape:http://ep/metrics", Err: "HTTP 502"})
	if trs := e.Evaluate(now); len(trs) != 0 {
		t.Errorf("transitions on a scrape error: %+v", trs)
	}
	a := e.Current()[0]
	if a.State != Firing || !a.UnknownSince.Equal(now) || a.Data != telemetry.Error || a.Reason != "source failing: HTTP 502" {
		t.Errorf("alert %+v", a)
	}
	// Scrapes that see no new requests: alive, nothing to judge.
	now = now.Add(5 * time.Minute)
	e.Observe(hist(now, 0, 0))
	e.Evaluate(now)
	if a := e.Current()[0]; a.State != Firing || a.Data != telemetry.NoData {
		t.Errorf("no traffic: %s %s, want firing with no data", a.State, a.Data)
	}
	// Healthy traffic again resolves it.
	for i := 1; i <= 12; i++ {
		now = now.Add(5 * time.Second)
		e.Observe(hist(now, 100, 100))
	}
	if trs := e.Evaluate(now); len(trs) != 1 || trs[0].To != Resolved {
		t.Errorf("transitions %+v, want resolved", trs)
	}
	if h := e.History(); len(h) != 1 || h[0].State != Resolved {
		t.Errorf("history %+v", h)
	}
}

func TestCountersAreFixedSize(t *testing.T) {
	for _, period := range []time.Duration{10 * time.Minute, 28 * 24 * time.Hour, 365 * 24 * time.Hour} {
		ev := newEvents(ttftRatio(period).WithDefaults())
		c := ev.counter("probe")
		if len(c.rings) != 6 {
			t.Errorf("period %v: %d rings, want 6 (period + 5 distinct burn windows)", period, len(c.rings))
		}
		for _, r := range c.rings {
			if len(r.end) != slotsPerWindow+1 {
				t.Errorf("period %v: %d slots", period, len(r.end))
			}
		}
	}
}

func TestScaledDemoFiresWithinAMinute(t *testing.T) {
	e := New([]Objective{ttftRatio(28 * 24 * time.Hour)}, nil, Options{Scale: 4032})
	o := e.Objectives()[0]
	if o.Period != 10*time.Minute {
		t.Fatalf("scaled objective %+v", o)
	}
	// Each pair whose short window meets the 10 s floor keeps the
	// workbook's 12× long window (2 m): floored to 10s/10s, the long
	// window smoothed nothing and the demo's pages flapped with each burst.
	for _, w := range o.BurnWindows {
		if w.Short != 10*time.Second || w.Long != 2*time.Minute {
			t.Errorf("scaled burn windows %v/%v, want 2m/10s", w.Long, w.Short)
		}
	}
	start := epoch()
	now := start
	for i := 0; i < 60; i++ { // one probe a second, all failing after 10 s
		now = start.Add(time.Duration(i) * time.Second)
		v := 1.0
		if i >= 10 {
			v = 9
		}
		e.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: now, Endpoint: "ep", Signal: telemetry.TTFT,
			Source: "sim:x", Value: v, Interval: time.Second})
		for _, tr := range e.Evaluate(now) {
			if tr.To == Firing && now.Sub(start) > 20*time.Second {
				t.Errorf("fired only after %v", now.Sub(start))
			}
			if tr.To == Firing {
				return
			}
		}
	}
	t.Fatal("scaled objective never fired")
}

// The workbook's rule is a burn rate that exceeds the factor: a burn exactly
// at the factor spends the budget at the rate the rule tolerates and must not
// fire. With a 75 % target (a budget of exactly 0.25) every probe too slow
// burns at exactly 4×.
func TestBurnExactlyAtFactorDoesNotFire(t *testing.T) {
	obj := ttftRatio(time.Hour)
	obj.Target = 0.75
	obj.BurnWindows = []BurnWindow{{Factor: 4, Long: time.Hour, Short: 5 * time.Minute}}
	e := New([]Objective{obj}, nil, Options{})
	_, tr := drive(e, epoch(), 2*time.Hour, "", func(int) bool { return true })
	if tr != nil {
		t.Fatalf("fired at a burn of exactly the factor: %+v", tr.Alert)
	}
	a := e.Current()[0]
	if a.State != Inactive || a.Value != 4 || a.Threshold != 4 {
		t.Errorf("state %s value %v threshold %v; want inactive at a burn of exactly 4 against 4", a.State, a.Value, a.Threshold)
	}
}
