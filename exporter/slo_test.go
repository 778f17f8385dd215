package exporter

import (
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// sloRig is a real store and SLO engine with an exporter behind them, fed
// what a probe Runner emits, as monitor wires them.
type sloRig struct {
	eng  *slo.Engine
	exp  *Exporter
	sink telemetry.Tee
}

const rigEndpoint = "ep"

// ttftRatio is "99 % of probes get their first token within 0.5 s over
// 28 days": a ratio objective, with page and ticket alerts.
func ttftRatio() slo.Objective {
	return slo.Objective{Kind: slo.Ratio, Signal: telemetry.TTFT, Threshold: 0.5, Target: 0.99}
}

func newSLORig(t *testing.T, objs ...slo.Objective) *sloRig {
	t.Helper()
	store := telemetry.NewStore(telemetry.DefaultStoreConfig())
	eng := slo.New(objs, store, slo.Options{})
	if w := eng.Warnings(); len(w) > 0 {
		t.Fatalf("engine warnings: %v", w)
	}
	exp := New(Options{Alerts: eng})
	return &sloRig{eng: eng, exp: exp, sink: telemetry.Tee{store, eng, exp}}
}

func (r *sloRig) announce(at time.Time) {
	r.sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: at, Endpoint: rigEndpoint, Source: src,
		Interval: 5 * time.Second, Info: &telemetry.Endpoint{Name: rigEndpoint, Model: "m"}})
}

func (r *sloRig) probe(at time.Time, res *probe.Result) {
	for _, o := range probe.Observations(res, rigEndpoint, src, 5*time.Second, at) {
		r.sink.Observe(o)
	}
}

// goodResult is a healthy three-token reply: TTFT 100 ms, TPOT 20 ms.
func goodResult() *probe.Result {
	return &probe.Result{OK: true, TTFT: 100 * time.Millisecond, E2E: 140 * time.Millisecond,
		EventOffsets: []time.Duration{100 * time.Millisecond, 120 * time.Millisecond, 140 * time.Millisecond},
		Events:       3, OutputTokens: 3, TokensSource: probe.TokensUsage}
}

func failedResult() *probe.Result {
	return &probe.Result{OK: false, ErrorKind: probe.ErrConnect, Err: "connection refused"}
}

// labelsOf returns a metric's labels as a map.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// checkOneHot asserts that every alert the engine has (Current: inactive
// included) has its state series, one per state, 1 for want and 0 for the
// others, and that there are no other state series.
func checkOneHot(t *testing.T, fams map[string]*dto.MetricFamily, alerts []slo.Alert, want slo.State) {
	t.Helper()
	if n, exp := len(fams["ttftop_slo_alert_state"].GetMetric()), len(alerts)*len(alertStates()); n != exp {
		t.Errorf("%d alert_state series, want %d (%d alerts × %d states)", n, exp, len(alerts), len(alertStates()))
	}
	for _, a := range alerts {
		if a.State != want {
			t.Errorf("engine: %s/%s %s is %s, want %s", a.Objective, a.Severity, a.Endpoint, a.State, want)
		}
		for _, st := range alertStates() {
			lbl := map[string]string{"objective": a.Objective, "endpoint": a.Endpoint, "severity": a.Severity, "state": string(st)}
			m := find(fams, "ttftop_slo_alert_state", lbl)
			if m == nil {
				t.Errorf("no ttftop_slo_alert_state%v", lbl)
				continue
			}
			if v, exp := m.GetGauge().GetValue(), map[bool]float64{true: 1, false: 0}[st == want]; v != exp {
				t.Errorf("ttftop_slo_alert_state%v = %g, want %g", lbl, v, exp)
			}
		}
	}
}

// burnRates returns window → rate of one objective's burn-rate series.
func burnRates(fams map[string]*dto.MetricFamily, objective string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams["ttftop_slo_burn_rate"].GetMetric() {
		if l := labelsOf(m); l["objective"] == objective {
			out[l["window"]] = m.GetGauge().GetValue()
		}
	}
	return out
}

var workbookWindows = []string{"1h", "30m", "3d", "5m", "6h"} // sorted

// TestSLOSeriesFromFirstEvaluation: no SLO series before the engine has
// judged anything, then every objective × endpoint × severity has its
// one-hot state from the first evaluation on, no data included; while
// healthy, the ratio objective's burn rates are 0 over exactly the
// workbook windows, labelled as docs/exporter.md's rules name them.
func TestSLOSeriesFromFirstEvaluation(t *testing.T) {
	r := newSLORig(t, append(slo.DefaultObjectives(), ttftRatio())...)
	t0 := time.Unix(1_700_000_000, 0)
	r.announce(t0)
	fams := scrape(t, r.exp.Handler())
	if f := fams["ttftop_slo_alert_state"]; f != nil {
		t.Errorf("state series before any evaluation: %v", f)
	}

	r.eng.Evaluate(t0)
	alerts := r.eng.Current()
	if len(alerts) != len(slo.DefaultObjectives())+2 {
		t.Fatalf("engine has %d alerts, want one per default objective and page+ticket for the ratio: %v", len(alerts), alerts)
	}
	fams = scrape(t, r.exp.Handler())
	checkOneHot(t, fams, alerts, slo.NoDataState)
	for _, name := range []string{"ttftop_slo_burn_rate", "ttftop_slo_error_budget_remaining_ratio", "ttftop_slo_error_budget_span_seconds"} {
		if fams[name] != nil {
			t.Errorf("%s before any event (unknown must be absent): %v", name, fams[name])
		}
	}

	for i := range 20 {
		r.probe(t0.Add(time.Duration(i+1)*time.Second), goodResult())
	}
	now := t0.Add(20 * time.Second)
	r.eng.Evaluate(now)
	alerts = r.eng.Current()
	fams = scrape(t, r.exp.Handler())
	checkOneHot(t, fams, alerts, slo.Inactive)
	sev := map[string][]string{}
	for _, a := range alerts {
		sev[a.Objective] = append(sev[a.Objective], a.Severity)
	}
	if s := sev["ttft-ratio-99"]; !slices.Equal(s, []string{"page", "ticket"}) {
		t.Errorf("ratio objective's severities %v, want page and ticket", s)
	}
	burn := burnRates(fams, "ttft-ratio-99")
	if got := slices.Sorted(maps.Keys(burn)); !slices.Equal(got, workbookWindows) {
		t.Errorf("burn-rate windows %v, want %v", got, workbookWindows)
	}
	for w, v := range burn {
		if v != 0 {
			t.Errorf("burn rate %s = %g while every probe was good, want 0", w, v)
		}
	}
	for _, name := range slo.DefaultObjectives() {
		if b := burnRates(fams, name.Name); len(b) > 0 {
			t.Errorf("percentile objective %s has burn rates %v", name.Name, b)
		}
	}
	lbl := map[string]string{"objective": "ttft-ratio-99", "endpoint": rigEndpoint}
	if v := mustFind(t, fams, "ttftop_slo_error_budget_span_seconds", lbl).GetGauge().GetValue(); v != 19 {
		t.Errorf("budget span = %g s, want 19 (first event at +1 s, evaluated at +20 s)", v)
	}
	if m := find(fams, "ttftop_slo_error_budget_remaining_ratio", lbl); m != nil {
		t.Errorf("budget after 19 s of a 28 d period: %g, want absent", m.GetGauge().GetValue())
	}
}

// TestSLOFailuresBudgetHidden: 25 s of failed probes fire both severities
// with burn rate 100 (every event bad, 1 % budget) in every window; the
// engine's budget is -99 (25 s extrapolated to 28 days), which the exporter
// keeps back while it states the 25 s span.
func TestSLOFailuresBudgetHidden(t *testing.T) {
	r := newSLORig(t, ttftRatio())
	t0 := time.Unix(1_700_000_000, 0)
	r.announce(t0)
	for i := 0; i <= 25; i += 5 {
		r.probe(t0.Add(time.Duration(i)*time.Second), failedResult())
	}
	now := t0.Add(25 * time.Second)
	r.eng.Evaluate(now)
	alerts := r.eng.Current()
	fams := scrape(t, r.exp.Handler())
	checkOneHot(t, fams, alerts, slo.Firing)
	if b := alerts[0].BudgetRemaining; b == nil || math.Abs(*b+99) > 1e-9 {
		t.Fatalf("engine budget %v, want -99 (this test is about hiding it)", b)
	}
	burn := burnRates(fams, "ttft-ratio-99")
	if got := slices.Sorted(maps.Keys(burn)); !slices.Equal(got, workbookWindows) {
		t.Errorf("burn-rate windows %v, want %v", got, workbookWindows)
	}
	for w, v := range burn {
		if math.Abs(v-100) > 1e-9 {
			t.Errorf("burn rate %s = %g, want 100", w, v)
		}
	}
	lbl := map[string]string{"objective": "ttft-ratio-99", "endpoint": rigEndpoint}
	if v := mustFind(t, fams, "ttftop_slo_error_budget_span_seconds", lbl).GetGauge().GetValue(); v != 25 {
		t.Errorf("budget span = %g s, want 25", v)
	}
	if m := find(fams, "ttftop_slo_error_budget_remaining_ratio", lbl); m != nil {
		t.Errorf("budget exported after 25 s: %g", m.GetGauge().GetValue())
	}
	// The probe's own series say the same.
	plbl := map[string]string{"endpoint": rigEndpoint, "model": "m"}
	if v := mustFind(t, fams, "ttftop_probe_success", plbl).GetGauge().GetValue(); v != 0 {
		t.Errorf("probe_success = %g, want 0", v)
	}
	if v := mustFind(t, fams, "ttftop_probe_requests_total", map[string]string{"result": "failure", "error_kind": "connect"}).GetCounter().GetValue(); v != 6 {
		t.Errorf("failures = %g, want 6", v)
	}
	if v := mustFind(t, fams, "ttftop_probe_requests_total", map[string]string{"result": "success"}).GetCounter().GetValue(); v != 0 {
		t.Errorf("successes = %g, want 0 (series kept at zero)", v)
	}
}

// TestSLOBudgetOnceSpanCoversLongestWindow: the budget appears when the
// events cover the longest burn window (3 d of the 28 d objective), with
// the engine's value.
func TestSLOBudgetOnceSpanCoversLongestWindow(t *testing.T) {
	r := newSLORig(t, ttftRatio())
	t0 := time.Unix(1_700_000_000, 0)
	r.announce(t0)
	const step = 10 * time.Minute
	n := int(72*time.Hour/step) + 1 // t0 … t0+3d
	lbl := map[string]string{"objective": "ttft-ratio-99", "endpoint": rigEndpoint}
	for i := range n {
		at := t0.Add(time.Duration(i) * step)
		res := goodResult()
		if i == 100 {
			res = failedResult()
		}
		r.probe(at, res)
		if i < n-2 {
			continue
		}
		r.eng.Evaluate(at)
		fams := scrape(t, r.exp.Handler())
		span := mustFind(t, fams, "ttftop_slo_error_budget_span_seconds", lbl).GetGauge().GetValue()
		if want := at.Sub(t0).Seconds(); span != want {
			t.Errorf("span = %g s, want %g", span, want)
		}
		m := find(fams, "ttftop_slo_error_budget_remaining_ratio", lbl)
		if i == n-2 {
			if m != nil {
				t.Errorf("budget exported at a span of %g s, under the 3 d window", span)
			}
			continue
		}
		if m == nil {
			t.Fatalf("no budget at a span of %g s", span)
		}
		want := 1 - (1.0/float64(n))/0.01
		if engine := r.eng.Current()[0].BudgetRemaining; engine == nil || *engine != m.GetGauge().GetValue() {
			t.Errorf("budget %g, engine %v", m.GetGauge().GetValue(), engine)
		}
		if v := m.GetGauge().GetValue(); math.Abs(v-want) > 1e-9 {
			t.Errorf("budget %g, want %g (1 bad of %d)", v, want, n)
		}
	}
}

// fakeSLO is an AlertSource whose alerts a test changes between scrapes.
type fakeSLO struct {
	mu     sync.Mutex
	alerts []slo.Alert
	objs   []slo.Objective
}

func (f *fakeSLO) Current() []slo.Alert {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.alerts)
}

func (f *fakeSLO) Objectives() []slo.Objective {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.objs)
}

func (f *fakeSLO) setState(s slo.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.alerts {
		f.alerts[i].State = s
	}
}

// TestSLOMetricsReadAtScrape: values come from the source at each scrape;
// a window in two alerts is one series, an unknown rate none, and a state
// unknown to this package still shows.
func TestSLOMetricsReadAtScrape(t *testing.T) {
	budget := 0.25
	evaluated := time.Unix(1_700_000_000, 0)
	src := &fakeSLO{
		objs: []slo.Objective{ttftRatio().WithDefaults()},
		alerts: []slo.Alert{
			{Objective: "ttft-ratio-99", Endpoint: "ep", Severity: "page", State: slo.Pending, EvaluatedAt: evaluated,
				BudgetRemaining: &budget, BudgetSpan: 100 * time.Hour,
				BurnRates: []slo.BurnRate{
					{Window: time.Hour, Rate: 15, Factor: 14.4}, {Window: 5 * time.Minute, Rate: 20, Factor: 14.4},
					{Window: 6 * time.Hour, Rate: 7, Factor: 6}, {Window: 30 * time.Minute, Rate: 9, Factor: 6},
				}},
			{Objective: "ttft-ratio-99", Endpoint: "ep", Severity: "ticket", State: slo.Pending, EvaluatedAt: evaluated,
				BudgetRemaining: &budget, BudgetSpan: 100 * time.Hour,
				BurnRates: []slo.BurnRate{
					{Window: 72 * time.Hour, Rate: 1.5, Factor: 1}, {Window: 6 * time.Hour, Rate: 7, Factor: 1}, // 6h again
					{Window: 24 * time.Hour, Rate: math.NaN()},
				}},
		},
	}
	e := New(Options{Alerts: src})
	fams := scrape(t, e.Handler())
	lbl := map[string]string{"objective": "ttft-ratio-99", "endpoint": "ep"}
	if v := mustFind(t, fams, "ttftop_slo_error_budget_remaining_ratio", lbl).GetGauge().GetValue(); v != 0.25 {
		t.Errorf("budget = %g", v)
	}
	want := map[string]float64{"1h": 15, "5m": 20, "6h": 7, "30m": 9, "3d": 1.5}
	if got := burnRates(fams, "ttft-ratio-99"); !maps.Equal(got, want) {
		t.Errorf("burn rates %v, want %v (6h once, NaN absent)", got, want)
	}
	checkOneHot(t, fams, src.Current(), slo.Pending)
	src.setState(slo.Firing)
	checkOneHot(t, scrape(t, e.Handler()), src.Current(), slo.Firing) // no call into the exporter: read at scrape time
	src.setState("silenced")
	fams = scrape(t, e.Handler())
	for _, s := range []string{"page", "ticket"} {
		sl := map[string]string{"severity": s, "state": "silenced"}
		if v := mustFind(t, fams, "ttftop_slo_alert_state", sl).GetGauge().GetValue(); v != 1 {
			t.Errorf("alert_state%v = %g", sl, v)
		}
	}
}
