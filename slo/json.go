package slo

import (
	"github.com/ttftop/ttftop/telemetry"
)

// The JSON of alerts, objectives and check results as ttftop's documents
// write them (docs/json.md): every number named for its unit. Alert's and
// Objective's own encoding (struct tags, base units) is what recordings
// store; views write these.

// ValueJSON is an objective's measured value as its alert's JSON writes
// it: the key named for the unit and the value in it, null when not
// measured (v nil).
func ValueJSON(a Alert, v *float64) (key string, value any) {
	unit, f := alertUnit(a)
	if v == nil {
		return unitKey("value", unit), nil
	}
	return unitKey("value", unit), *v * f
}

// alertUnit is the JSON unit of an alert's value, threshold and peak and
// the factor from slo's base unit to it: a percentile objective's signal's
// (ms for latencies), a ratio for error rates, availability and target
// health, a burn rate for ratio objectives.
func alertUnit(a Alert) (string, float64) {
	switch a.Kind {
	case Ratio:
		return "burn_rate", 1
	case Percentile:
		return signalUnit(a.Signal)
	}
	return "ratio", 1
}

// signalUnit is sig's JSON unit and the factor from its base unit (slo's
// seconds, ratios) to it.
func signalUnit(sig telemetry.Signal) (string, float64) {
	unit, per := sig.JSONUnit()
	return unit, sig.Info().Scale / per
}

// unitKey is stat named for its unit: "value_ms"; stat alone for a
// signal without one.
func unitKey(stat, unit string) string {
	if unit == "" {
		return stat
	}
	return stat + "_" + unit
}

// AlertJSON is a's JSON as a map with every number named for its unit
// (alertUnit; budget_remaining_ratio; the burn windows and budget span in
// ms; how many observations the value rests on): everything Alert
// gains later is carried along as it is.
func AlertJSON(a Alert) (map[string]any, error) {
	m, err := telemetry.JSONMap(a)
	if err != nil {
		return nil, err
	}
	unit, f := alertUnit(a)
	delete(m, "unit") // the keys say it
	for _, k := range []string{"value", "threshold", "peak"} {
		telemetry.RenameJSON(m, k, unitKey(k, unit), f)
	}
	telemetry.RenameJSON(m, "budget_remaining", "budget_remaining_ratio", 1)
	telemetry.RenameJSON(m, "budget_span", "budget_span_ms", 1e-6)
	telemetry.RenameJSON(m, "count", "observations", 1)
	if rates, ok := m["burn_rates"].([]any); ok {
		for _, r := range rates {
			if r, ok := r.(map[string]any); ok {
				telemetry.RenameJSON(r, "window", "window_ms", 1e-6)
				telemetry.RenameJSON(r, "rate", "value_burn_rate", 1)
				telemetry.RenameJSON(r, "factor", "threshold_burn_rate", 1)
			}
		}
	}
	return m, nil
}

// ResultJSON is a check's result as a map with every number named for its
// unit: a percentile objective's value and threshold in its signal's unit
// (ms for latencies); a ratio objective's share of good events and its
// target, an error rate or availability and its threshold, as *_ratio; how
// many observations the value rests on. A value not measured is absent,
// never 0.
func ResultJSON(r Result) (map[string]any, error) {
	m, err := telemetry.JSONMap(r)
	if err != nil {
		return nil, err
	}
	unit, f := "ratio", 1.0
	if r.Kind == Percentile {
		unit, f = signalUnit(r.Signal)
	}
	telemetry.RenameJSON(m, "value", unitKey("value", unit), f)
	telemetry.RenameJSON(m, "threshold", unitKey("threshold", unit), f)
	telemetry.RenameJSON(m, "count", "observations", 1)
	return m, nil
}

// ObjectiveJSON is o's JSON as a map with every number named for its
// unit: window, for, keep_firing_for, period and the burn windows' long
// and short in ms; the threshold in its signal's unit (percentile and
// ratio objectives: ms for latencies) or as a ratio (error rate); the
// target as a ratio; a burn window's factor as a burn rate.
func ObjectiveJSON(o Objective) (map[string]any, error) {
	m, err := telemetry.JSONMap(o)
	if err != nil {
		return nil, err
	}
	unit, f := "ratio", 1.0
	if o.Kind == Percentile || o.Kind == Ratio {
		unit, f = signalUnit(o.Signal)
	}
	telemetry.RenameJSON(m, "threshold", unitKey("threshold", unit), f)
	telemetry.RenameJSON(m, "target", "target_ratio", 1)
	for _, k := range []string{"window", "for", "keep_firing_for", "period"} {
		telemetry.RenameJSON(m, k, k+"_ms", 1e-6)
	}
	if ws, ok := m["burn_windows"].([]any); ok {
		for _, w := range ws {
			if w, ok := w.(map[string]any); ok {
				telemetry.RenameJSON(w, "long", "long_ms", 1e-6)
				telemetry.RenameJSON(w, "short", "short_ms", 1e-6)
				telemetry.RenameJSON(w, "factor", "threshold_burn_rate", 1)
			}
		}
	}
	return m, nil
}
