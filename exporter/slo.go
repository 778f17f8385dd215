package exporter

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/slo"
)

// alertStates lists every state ttftop_slo_alert_state reports, so a
// state's series exists (at 0) before the alert first enters it and a
// query like `ttftop_slo_alert_state{state="firing"} == 1` never hits a
// missing series mistaken for "not firing".
func alertStates() []slo.State {
	return []slo.State{slo.Inactive, slo.Pending, slo.Firing, slo.Resolved, slo.NoDataState, slo.UnknownState, slo.Unmeasurable}
}

// sloCollector reads the alerts at scrape time, so the values served are
// the engine's current ones, never a copy taken at some earlier tick.
type sloCollector struct {
	src        AlertSource
	burn       *prometheus.Desc
	state      *prometheus.Desc
	budget     *prometheus.Desc
	budgetSpan *prometheus.Desc
}

func newSLOCollector(src AlertSource) *sloCollector {
	return &sloCollector{
		src: src,
		burn: prometheus.NewDesc("ttftop_slo_burn_rate",
			"Error-budget burn rate of a ratio objective on an endpoint over a window (1 = spending the budget exactly over the SLO period); absent while the window holds no events.",
			[]string{"objective", "endpoint", "window"}, nil),
		state: prometheus.NewDesc("ttftop_slo_alert_state",
			"1 for the alert's current state (inactive, pending, firing, resolved, no_data, unknown, unmeasurable), 0 for the others; a ratio objective has one alert per severity (page, ticket).",
			[]string{"objective", "endpoint", "severity", "state"}, nil),
		budget: prometheus.NewDesc("ttftop_slo_error_budget_remaining_ratio",
			"Fraction of a ratio objective's error budget left over its period (1 = untouched, 0 or less = spent); absent until the events cover the objective's longest burn window.",
			[]string{"objective", "endpoint"}, nil),
		budgetSpan: prometheus.NewDesc("ttftop_slo_error_budget_span_seconds",
			"How much of the SLO period the events behind the error budget cover (at most the period).",
			[]string{"objective", "endpoint"}, nil),
	}
}

// Describe sends the fixed descriptors.
func (c *sloCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.burn
	ch <- c.state
	ch <- c.budget
	ch <- c.budgetSpan
}

// Collect exports every evaluated objective × endpoint: one one-hot state
// set per alert (a ratio objective's page and ticket alerts are told apart
// by severity), the burn windows of all its alerts merged, and the budget.
// Merging deduplicates windows shared by two pairs (6 h is the page's long
// window and the ticket's short one, computed from the same events at the
// same instant): a duplicate series would fail the whole metric family.
func (c *sloCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	longest := map[string]time.Duration{}
	for _, o := range c.src.Objectives() {
		for _, bw := range o.BurnWindows {
			longest[o.Name] = max(longest[o.Name], bw.Long, bw.Short)
		}
	}
	type pairKey struct{ objective, endpoint string }
	type stateKey struct {
		pairKey
		severity string
	}
	type burnKey struct {
		pairKey
		window string
	}
	seenState := map[stateKey]bool{}
	seenBurn := map[burnKey]bool{}
	seenBudget := map[pairKey]bool{}
	for _, a := range c.src.Current() {
		if a.EvaluatedAt.IsZero() {
			// Never judged: "inactive" would claim a verdict nobody made.
			continue
		}
		pk := pairKey{cleanLabel(a.Objective), cleanLabel(a.Endpoint)}
		if sk := (stateKey{pk, cleanLabel(a.Severity)}); !seenState[sk] {
			seenState[sk] = true
			c.collectState(ch, sk.objective, sk.endpoint, sk.severity, a.State)
		}
		for _, br := range a.BurnRates {
			// Unknown rates are absent, never 0: 0 would read as "no
			// budget spent" (missing is not zero).
			if br.Window <= 0 || math.IsNaN(br.Rate) || math.IsInf(br.Rate, 0) {
				continue
			}
			// Prometheus's duration notation, as in the rules' range
			// selectors: 5m, 30m, 1h, 6h, 3d.
			bk := burnKey{pk, model.Duration(br.Window).String()}
			if seenBurn[bk] {
				continue
			}
			seenBurn[bk] = true
			ch <- constMetric(prometheus.NewConstMetric(c.burn, prometheus.GaugeValue, br.Rate, pk.objective, pk.endpoint, bk.window))
		}
		if seenBudget[pk] || a.BudgetRemaining == nil || math.IsNaN(*a.BudgetRemaining) {
			continue
		}
		seenBudget[pk] = true
		ch <- constMetric(prometheus.NewConstMetric(c.budgetSpan, prometheus.GaugeValue, a.BudgetSpan.Seconds(), pk.objective, pk.endpoint))
		// A budget judged on less data than the alerts' longest window
		// extrapolates a few events to the whole period (-99 after 25 s
		// of failures): absent until the span means something.
		if need, ok := longest[a.Objective]; ok && a.BudgetSpan >= need {
			ch <- constMetric(prometheus.NewConstMetric(c.budget, prometheus.GaugeValue, *a.BudgetRemaining, pk.objective, pk.endpoint))
		}
	}
}

// collectState sends the one-hot state series of one alert.
func (c *sloCollector) collectState(ch chan<- prometheus.Metric, objective, endpoint, severity string, current slo.State) {
	known := false
	for _, st := range alertStates() {
		v := 0.0
		if current == st {
			v, known = 1, true
		}
		ch <- constMetric(prometheus.NewConstMetric(c.state, prometheus.GaugeValue, v, objective, endpoint, severity, string(st)))
	}
	if !known && current != "" {
		// A state added to slo after this list: still shown, not lost.
		ch <- constMetric(prometheus.NewConstMetric(c.state, prometheus.GaugeValue, 1, objective, endpoint, severity, cleanLabel(string(current))))
	}
}
