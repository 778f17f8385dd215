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
	doc := Document{Schema: telemetry.JSONSchema, Snapshot: snap, WindowMS: float64(snap.Window) / float64(time.Millisecond)}
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
		m, err := slo.AlertJSON(o.Alert)
		if err != nil {
			return nil, err
		}
		key, value := slo.ValueJSON(o.Alert, o.Value)
		m[key] = value
		out.Objectives = append(out.Objectives, m)
	}
	for _, a := range s.Alerts {
		m, err := slo.AlertJSON(a)
		if err != nil {
			return nil, err
		}
		out.Alerts = append(out.Alerts, m)
	}
	return json.Marshal(out)
}
