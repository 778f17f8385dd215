package exporter

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/tokentop/tokentop/slo"
)

// alertStates lists every state tokentop_slo_alert_state reports, so a
// state's series exists (at 0) before the alert first enters it and a
// query like `tokentop_slo_alert_state{state="firing"} == 1` never hits a
// missing series mistaken for "not firing".
func alertStates() []slo.State {
	return []slo.State{slo.Inactive, slo.Pending, slo.Firing, slo.Resolved, slo.NoDataState, slo.UnknownState}
}

// sloCollector reads the alerts at scrape time, so the values served are
// the engine's current ones, never a copy taken at some earlier tick.
type sloCollector struct {
	src    AlertSource
	burn   *prometheus.Desc
	state  *prometheus.Desc
	budget *prometheus.Desc
}

func newSLOCollector(src AlertSource) *sloCollector {
	return &sloCollector{
		src: src,
		burn: prometheus.NewDesc("tokentop_slo_burn_rate",
			"Error-budget burn rate of an objective on an endpoint over a window (1 = spending the budget exactly over the SLO period).",
			[]string{"objective", "endpoint", "window"}, nil),
		state: prometheus.NewDesc("tokentop_slo_alert_state",
			"1 for the alert's current state (inactive, pending, firing, resolved, no_data, unknown), 0 for the others.",
			[]string{"objective", "endpoint", "state"}, nil),
		budget: prometheus.NewDesc("tokentop_slo_error_budget_remaining_ratio",
			"Fraction of the objective's error budget left over its period (1 = untouched, 0 or less = spent).",
			[]string{"objective", "endpoint"}, nil),
	}
}

// Describe sends the fixed descriptors.
func (c *sloCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.burn
	ch <- c.state
	ch <- c.budget
}

// Collect exports each (objective, endpoint) once and each burn window
// once: the engine's window pairs share windows (6 h is the long window of
// one pair and the short one of another), and a duplicate series would
// fail the whole scrape.
func (c *sloCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	type alertKey struct{ objective, endpoint string }
	type burnKey struct {
		alertKey
		window time.Duration
	}
	seen := map[alertKey]bool{}
	seenBurn := map[burnKey]bool{}
	for _, a := range c.src.Alerts() {
		k := alertKey{cleanLabel(a.Objective), cleanLabel(a.Endpoint)}
		if seen[k] {
			continue
		}
		seen[k] = true
		known := false
		for _, st := range alertStates() {
			v := 0.0
			if a.State == st {
				v, known = 1, true
			}
			ch <- constMetric(prometheus.NewConstMetric(c.state, prometheus.GaugeValue, v, k.objective, k.endpoint, string(st)))
		}
		if !known && a.State != "" {
			// A state added to slo after this list: still shown, not lost.
			ch <- constMetric(prometheus.NewConstMetric(c.state, prometheus.GaugeValue, 1, k.objective, k.endpoint, cleanLabel(string(a.State))))
		}
		if a.BudgetRemaining != nil && !math.IsNaN(*a.BudgetRemaining) {
			ch <- constMetric(prometheus.NewConstMetric(c.budget, prometheus.GaugeValue, *a.BudgetRemaining, k.objective, k.endpoint))
		}
		for _, br := range a.BurnRates {
			bk := burnKey{k, br.Window}
			// Unknown rates are absent, never 0: 0 would read as "no
			// budget spent" (slo.md §8: missing is not zero).
			if seenBurn[bk] || br.Window <= 0 || math.IsNaN(br.Rate) || math.IsInf(br.Rate, 0) {
				continue
			}
			seenBurn[bk] = true
			ch <- constMetric(prometheus.NewConstMetric(c.burn, prometheus.GaugeValue, br.Rate, k.objective, k.endpoint, model.Duration(br.Window).String()))
		}
	}
}
