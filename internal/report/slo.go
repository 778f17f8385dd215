package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Schema is the version every JSON document and line ttftop writes names
// in its "schema" field; docs/schema/ttftop-v1.schema.json describes it.
// Bump it when a field changes meaning or is renamed.
const Schema = "ttftop/v1"

// AlertReader is what a read-out takes from the SLO engine; *slo.Engine
// fits.
type AlertReader interface {
	// Current is every objective on every endpoint, whatever its state.
	Current() []slo.Alert
	// History is the alert episodes: firing now, then resolved.
	History() []slo.Alert
}

// Document is one headless read-out: the snapshot's endpoints and sources
// and, when objectives are judged, the SLO state.
type Document struct {
	// Schema names the JSON's version (docs/json.md).
	Schema string `json:"schema"`
	telemetry.Snapshot
	// WindowMS is the quantile window the figures cover.
	WindowMS float64 `json:"window_ms"`
	SLO      *SLO    `json:"slo,omitempty"`
	// Diagnosis is each endpoint's diagnosis by name, written into its
	// endpoint (see MarshalJSON); nil = not diagnosed.
	Diagnosis map[string]diagnosis.Diagnosis `json:"-"`
}

// SLO is the state of every objective and the alert episodes.
type SLO struct {
	// Objectives has one entry per objective × endpoint (× severity for
	// burn-rate objectives), inactive ones included.
	Objectives []ObjectiveState `json:"objectives"`
	// Alerts are the episodes: firing now, then resolved ones, newest
	// first, each with its start, end and peak.
	Alerts []slo.Alert `json:"alerts"`
}

// ObjectiveState is an objective's alert with its value null until the
// objective has been measured: missing is never zero.
type ObjectiveState struct {
	slo.Alert
	Value *float64 `json:"value"`
}

// Build assembles a document; alerts nil = no objectives judged.
func Build(snap telemetry.Snapshot, alerts AlertReader) Document {
	doc := Document{Schema: Schema, Snapshot: snap, WindowMS: float64(snap.Window) / float64(time.Millisecond)}
	if alerts == nil {
		return doc
	}
	cur := alerts.Current()
	s := &SLO{Objectives: make([]ObjectiveState, len(cur)), Alerts: alerts.History()}
	if s.Alerts == nil {
		s.Alerts = []slo.Alert{}
	}
	for i, a := range cur {
		s.Objectives[i] = ObjectiveState{Alert: a}
		if measured(a) {
			v := a.Value
			s.Objectives[i].Value = &v
		}
	}
	doc.SLO = s
	return doc
}

// measured reports whether an alert's Value is a figure: the engine keeps
// the last one (marked by Data when stale), and 0 before the first.
func measured(a slo.Alert) bool {
	return a.Count > 0 || a.Data == telemetry.Live
}

// WriteJSON writes the document as one indented JSON document.
func WriteJSON(w io.Writer, doc Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteText writes the snapshot's table and, when objectives are judged,
// one row per objective and endpoint with its state and figures.
func WriteText(w io.Writer, doc Document) error {
	if err := Text(w, doc.Snapshot); err != nil {
		return err
	}
	if doc.SLO == nil {
		return nil
	}
	return sloText(w, *doc.SLO, doc.At)
}

func sloText(w io.Writer, s SLO, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OBJECTIVE\tENDPOINT\tSTATE\tVALUE\tTHRESHOLD\tDATA\tSINCE")
	for _, o := range s.Objectives {
		value := "—"
		if o.Value != nil {
			value = measured3(o.Alert, *o.Value)
		}
		name := o.Objective
		if o.Kind == slo.Ratio && o.Severity != "" {
			name += " (" + o.Severity + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, o.Endpoint, stateText(o.State), value,
			figure(o.Alert, o.Threshold), o.Data, since(o.Alert, now))
	}
	if len(s.Objectives) == 0 {
		fmt.Fprintln(tw, "(no objective applies to any endpoint yet)")
	}
	for _, a := range s.Alerts {
		if a.State != slo.Resolved {
			continue // firing ones are rows above
		}
		fmt.Fprintf(tw, "resolved %s on %s: fired %s, resolved %s, peak %s\n", a.Objective, a.Endpoint,
			a.FiredAt.Format(time.RFC3339), a.ResolvedAt.Format(time.RFC3339), measured3(a, a.Peak))
	}
	return tw.Flush()
}

// stateText upper-cases the states a human must notice (FIRING,
// PENDING, UNKNOWN).
func stateText(s slo.State) string {
	switch s {
	case slo.Firing, slo.Pending, slo.UnknownState:
		return strings.ToUpper(string(s))
	}
	return string(s)
}

// figure prints a value or threshold in the objective's terms: a latency,
// an error ratio, or a burn rate.
func figure(a slo.Alert, v float64) string {
	switch a.Kind {
	case slo.Ratio:
		return strconv.FormatFloat(v, 'g', 3, 64) + "×"
	case slo.ErrorRate:
		return slo.FormatRatio(v)
	}
	return slo.FormatValue(a.Signal, v)
}

// measured3 prints a measured figure (a value, a peak) as the dashboard
// and the endpoint table print theirs, with 3 significant digits (11.1ms
// beside 7.41ms, not 11.065ms); thresholds are what the user wrote and
// print exactly (figure).
func measured3(a slo.Alert, v float64) string {
	if a.Kind == slo.Percentile {
		info := a.Signal.Info()
		return figures.Value(v*info.Scale, info.Unit)
	}
	return figure(a, v)
}

// since says how long the current trouble has lasted.
func since(a slo.Alert, now time.Time) string {
	var t time.Time
	switch a.State {
	case slo.Firing, slo.Pending:
		t = a.ActiveAt
	case slo.UnknownState, slo.NoDataState:
		t = a.UnknownSince
	}
	if t.IsZero() {
		return ""
	}
	return Age(now.Sub(t))
}

// MarshalJSON writes the SLO state with every number named for its unit,
// as the rest of ttftop's JSON (docs/json.md): a latency objective's
// value, threshold and peak in ms (slo.Alert keeps seconds, its base
// unit), ratios as fractions named *_ratio, burn rates *_burn_rate, the
// burn windows and the budget span in ms (nanoseconds in slo.Alert). An
// unmeasured objective's value stays null.
func (s SLO) MarshalJSON() ([]byte, error) {
	out := struct {
		Objectives []map[string]any `json:"objectives"`
		Alerts     []map[string]any `json:"alerts"`
	}{Objectives: make([]map[string]any, 0, len(s.Objectives)), Alerts: make([]map[string]any, 0, len(s.Alerts))}
	for _, o := range s.Objectives {
		m, err := AlertJSON(o.Alert)
		if err != nil {
			return nil, err
		}
		unit, f := alertUnit(o.Alert)
		key := unitKey("value", unit)
		m[key] = nil
		if o.Value != nil {
			m[key] = *o.Value * f
		}
		out.Objectives = append(out.Objectives, m)
	}
	for _, a := range s.Alerts {
		m, err := AlertJSON(a)
		if err != nil {
			return nil, err
		}
		out.Alerts = append(out.Alerts, m)
	}
	return json.Marshal(out)
}

// alertUnit is the JSON unit of an alert's value, threshold and peak and
// the factor from slo's base unit to it: a percentile objective's signal's
// (ms for latencies), a ratio for error rates, availability and target
// health, a burn rate for ratio objectives.
func alertUnit(a slo.Alert) (string, float64) {
	switch a.Kind {
	case slo.Ratio:
		return "burn_rate", 1
	case slo.Percentile:
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
// ms; how many observations the value rests on): everything slo.Alert
// gains later is carried along as it is.
func AlertJSON(a slo.Alert) (map[string]any, error) {
	m, err := jsonMap(a)
	if err != nil {
		return nil, err
	}
	unit, f := alertUnit(a)
	delete(m, "unit") // the keys say it
	for _, k := range []string{"value", "threshold", "peak"} {
		rename(m, k, unitKey(k, unit), f)
	}
	rename(m, "budget_remaining", "budget_remaining_ratio", 1)
	rename(m, "budget_span", "budget_span_ms", 1e-6)
	rename(m, "count", "observations", 1)
	if rates, ok := m["burn_rates"].([]any); ok {
		for _, r := range rates {
			if r, ok := r.(map[string]any); ok {
				rename(r, "window", "window_ms", 1e-6)
				rename(r, "rate", "value_burn_rate", 1)
				rename(r, "factor", "threshold_burn_rate", 1)
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
func ResultJSON(r slo.Result) (map[string]any, error) {
	m, err := jsonMap(r)
	if err != nil {
		return nil, err
	}
	unit, f := "ratio", 1.0
	if r.Kind == slo.Percentile {
		unit, f = signalUnit(r.Signal)
	}
	rename(m, "value", unitKey("value", unit), f)
	rename(m, "threshold", unitKey("threshold", unit), f)
	rename(m, "count", "observations", 1)
	return m, nil
}

// rename moves key to newKey with its number times scale (1000 for
// seconds to ms, 1e-6 for nanoseconds); a null stays null.
func rename(m map[string]any, key, newKey string, scale float64) {
	v, ok := m[key]
	if !ok {
		return
	}
	delete(m, key)
	if f, isNum := v.(float64); isNum {
		m[newKey] = f * scale
		return
	}
	m[newKey] = v
}

// ObjectiveJSON is o's JSON as a map with every number named for its
// unit: window, for, keep_firing_for, period and the burn windows' long
// and short in ms; the threshold in its signal's unit (percentile and
// ratio objectives: ms for latencies) or as a ratio (error rate); the
// target as a ratio; a burn window's factor as a burn rate.
func ObjectiveJSON(o slo.Objective) (map[string]any, error) {
	m, err := jsonMap(o)
	if err != nil {
		return nil, err
	}
	unit, f := "ratio", 1.0
	if o.Kind == slo.Percentile || o.Kind == slo.Ratio {
		unit, f = signalUnit(o.Signal)
	}
	rename(m, "threshold", unitKey("threshold", unit), f)
	rename(m, "target", "target_ratio", 1)
	for _, k := range []string{"window", "for", "keep_firing_for", "period"} {
		rename(m, k, k+"_ms", 1e-6)
	}
	if ws, ok := m["burn_windows"].([]any); ok {
		for _, w := range ws {
			if w, ok := w.(map[string]any); ok {
				rename(w, "long", "long_ms", 1e-6)
				rename(w, "short", "short_ms", 1e-6)
				rename(w, "factor", "threshold_burn_rate", 1)
			}
		}
	}
	return m, nil
}

func jsonMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(b, &m)
	return m, err
}
