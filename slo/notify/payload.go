package notify

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Event is the JSON a command receives on stdin: one transition.
type Event struct {
	Schema  string    `json:"schema"` // telemetry.JSONSchema
	Status  string    `json:"status"` // firing or resolved
	From    slo.State `json:"from"`
	To      slo.State `json:"to"`
	At      time.Time `json:"at"`
	Alert   slo.Alert `json:"alert"` // written as slo.AlertJSON (MarshalJSON)
	Summary string    `json:"summary"`
	// Cause and Evidence are why the endpoint is unwell as it fired
	// (docs/diagnosis.md); absent when no cause was named.
	Cause    string `json:"cause,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	// Why is the whole read-out: summary, next step, other causes.
	Why *slo.Why `json:"why,omitempty"`
}

// MarshalJSON writes the event with its alert as every ttftop document
// writes alerts (slo.AlertJSON: numbers named for their unit, docs/json.md).
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event // the fields, without this method
	alert, err := slo.AlertJSON(e.Alert)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		plain
		Alert map[string]any `json:"alert"`
	}{plain(e), alert})
}

// newEvent is the payload of one transition.
func newEvent(tr slo.Transition) Event {
	ev := Event{Schema: telemetry.JSONSchema, Status: status(tr.Alert), From: tr.From, To: tr.To, At: tr.At, Alert: tr.Alert, Summary: Summary(tr.Alert), Why: tr.Why}
	if tr.Why != nil {
		ev.Cause, ev.Evidence = tr.Why.Cause, tr.Why.Evidence
	}
	return ev
}

// notable reports whether a transition is worth telling a human: an alert
// starting to fire, or a firing alert resolving. Pending, no-data and
// unknown changes are for the screen only.
func notable(tr slo.Transition) bool {
	return tr.To == slo.Firing && tr.From != slo.Firing || tr.From == slo.Firing && tr.To == slo.Resolved
}

func status(a slo.Alert) string {
	if a.State == slo.Resolved {
		return "resolved"
	}
	return "firing"
}

// Summary says an alert in one line, as a breach reads: "TTFT p95 7.2s >
// 5s over 5m on llama-prod (page)", "probe failures 53% > 50% over 1m on
// …"; resolved: "resolved: TTFT p95 3.1s ≤ 5s over 5m on …". Figures are
// rounded as the dashboard rounds them (figures); the exact ones are
// the alert's value and threshold.
func Summary(a slo.Alert) string {
	s := claim(a) + " on " + a.Endpoint
	if a.Severity != "" {
		s += " (" + a.Severity + ")"
	}
	if a.State == slo.Resolved {
		s = "resolved: " + s
		if a.Reason != "" {
			s += ": " + a.Reason
		}
	}
	return s
}

// claim is the alert's figure against its objective: a burn rate against
// its factor for ratio objectives, the measured latency or ratio against
// the threshold otherwise.
func claim(a slo.Alert) string {
	breach := a.Value > a.Threshold
	if a.Kind == slo.Ratio {
		rel := " ≤ "
		if breach {
			rel = " > "
		}
		return "burn rate " + figures.Number(a.Value) + "×" + rel + figures.Number(a.Threshold) + "× against " + a.Description
	}
	if a.Kind == slo.TargetUp {
		return slo.TargetUpClaim(a.Value) + " against " + a.Description
	}
	info := a.Signal.Info()
	v := figures.Value(a.Value*info.Scale, info.Unit)
	if a.Approx {
		v = "~" + v
	}
	return slo.Claim(a.Description, v, breach)
}

// AMAlert is one alert of Alertmanager's push API (POST /api/v2/alerts).
type AMAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt,omitzero"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// ToAlertmanager converts an alert. A firing alert ends at endsAt unless
// re-sent (Alertmanager's contract: it resolves alerts whose endsAt has
// passed); a resolved one ends when it resolved. why (nil when no cause
// was named) adds the cause, evidence and next_step annotations.
func ToAlertmanager(a slo.Alert, why *slo.Why, endsAt time.Time, generatorURL string) AMAlert {
	am := AMAlert{
		Labels: map[string]string{
			"alertname": a.Objective,
			"endpoint":  a.Endpoint,
			"severity":  a.Severity,
			"slo_kind":  string(a.Kind),
			"signal":    string(a.Signal),
		},
		Annotations: map[string]string{
			"summary":     Summary(a),
			"description": a.Description,
			"value":       strconv.FormatFloat(a.Value, 'g', 6, 64),
			"threshold":   strconv.FormatFloat(a.Threshold, 'g', 6, 64),
		},
		StartsAt:     a.ActiveAt,
		EndsAt:       endsAt,
		GeneratorURL: generatorURL,
	}
	if a.BudgetRemaining != nil {
		am.Annotations["budget_remaining"] = strconv.FormatFloat(*a.BudgetRemaining, 'g', 4, 64)
	}
	if why != nil {
		am.Annotations["cause"] = why.Cause
		am.Annotations["cause_summary"] = why.Summary
		am.Annotations["evidence"] = why.Evidence
		am.Annotations["next_step"] = why.Next
	}
	if !a.UnknownSince.IsZero() {
		am.Annotations["unknown_since"] = a.UnknownSince.UTC().Format(time.RFC3339)
	}
	if a.State == slo.Resolved {
		am.EndsAt = a.ResolvedAt
	}
	if am.StartsAt.IsZero() {
		am.StartsAt = a.FiredAt
	}
	return am
}
