package slo

import (
	"math"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Transition is one change of an alert's state, returned by Evaluate for
// notifications and the TUI.
type Transition struct {
	At    time.Time `json:"at"`
	From  State     `json:"from"`
	To    State     `json:"to"`
	Alert Alert     `json:"alert"`
	// Bell is set when an alert starts firing: the TUI may ring the
	// terminal bell if the user asked for it.
	Bell bool `json:"bell,omitempty"`
	// Why is the diagnosis of the alert's endpoint as the transition was
	// made, when it names a cause (docs/diagnosis.md). The SLO engine
	// leaves it nil; the monitor, which owns both, fills it for the
	// notifiers.
	Why *Why `json:"why,omitempty"`
}

// Why is a diagnosis in words, as notifications carry it.
type Why struct {
	// Cause is the leading cause's word ("kv_cache"), Summary it in a
	// few words.
	Cause   string `json:"cause"`
	Summary string `json:"summary,omitempty"`
	// Evidence is the figures it rests on against their baselines.
	Evidence string `json:"evidence,omitempty"`
	// Next is the one-line next step.
	Next string `json:"next,omitempty"`
	// More are the other causes named, root first.
	More []string `json:"more,omitempty"`
}

// rule is one objective on one endpoint: its alert and the state the
// alert's state machine needs.
type rule struct {
	obj      int // index into Engine.objs
	endpoint string
	alert    Alert
	// keepSince is the first evaluation without a breach while firing,
	// from which KeepFiringFor counts (as Prometheus' KeepFiringSince).
	keepSince time.Time
	// Ratio objectives: the burn windows of this rule's severity, and the
	// event counters shared by the objective's severities (fed once, by
	// the rule marked feeds).
	pairs  []BurnWindow
	events *events
	feeds  bool
	// noneUp (target_up): the rule breaches only when no target is up.
	noneUp bool
	// newestProbe is the newest probe the last measurement saw
	// (availability): one newer is a probe that arrived since.
	newestProbe time.Time
	// resolvedFor is how long a resolved alert stays resolved before it
	// is inactive again (Options.ResolvedFor).
	resolvedFor time.Duration
}

// step feeds one measurement to the alert state machine (Prometheus
// semantics): inactive → pending → firing (after For) →
// resolved; a pending alert drops as soon as the condition is false; a
// firing one stays firing for KeepFiringFor. Data that is stale, failing or
// absent never resolves anything: a pending or firing alert keeps its state
// "unknown since", other alerts move to the unknown or no-data state. A
// breach measured on an endpoint that has recovered (measurement.recovered)
// only keeps a firing alert firing: it starts none, and a pending one drops;
// and an availability alert starts only as a failed probe arrives.
func (r *rule) step(now time.Time, o *Objective, m measurement) (Transition, bool) {
	a := &r.alert
	from := a.State
	r.record(now, m)
	arrived := m.newestAt.IsZero() || m.newestAt.After(r.newestProbe)
	if !m.newestAt.IsZero() {
		r.newestProbe = m.newestAt
	}
	switch {
	case m.never && a.State != Pending && a.State != Firing:
		r.unmeasurable(now, m)
	case !m.judgeable():
		r.missing(now, m)
	case m.breach && (a.State == Firing || a.State == Pending && !m.recovered || !m.recovered && arrived):
		r.breaching(now, o, m.value)
	default:
		r.clear(now, o)
	}
	if a.State == from {
		return Transition{}, false
	}
	return Transition{At: now, From: from, To: a.State, Alert: *a, Bell: a.State == Firing}, true
}

// record copies the figures of m into the alert. Slices and pointers are
// fresh per measurement and never mutated, so copies of the alert can
// share them. Without a new figure the last one stays, marked by Data as
// stale or failing: the last good value is shown with its state, never
// as fresh.
func (r *rule) record(now time.Time, m measurement) {
	a := &r.alert
	a.EvaluatedAt, a.Data, a.Source = now, m.data, string(m.source)
	if !math.IsNaN(m.value) {
		a.Value, a.Threshold, a.Count, a.Approx = m.value, m.threshold, m.count, m.approx
	}
	a.BurnRates, a.BudgetRemaining, a.BudgetSpan = m.burn, m.budget, m.budgetSpan
}

func (r *rule) breaching(now time.Time, o *Objective, v float64) {
	a := &r.alert
	a.UnknownSince, a.Reason, r.keepSince = time.Time{}, "", time.Time{}
	switch a.State {
	case Firing:
	case Pending:
		if now.Sub(a.ActiveAt) >= o.For {
			a.State, a.FiredAt = Firing, now
		}
	default:
		a.State, a.ActiveAt, a.FiredAt, a.ResolvedAt, a.Peak = Pending, now, time.Time{}, time.Time{}, v
		if o.For <= 0 {
			a.State, a.FiredAt = Firing, now
		}
	}
	a.Peak = max(a.Peak, v)
}

func (r *rule) clear(now time.Time, o *Objective) {
	a := &r.alert
	a.UnknownSince = time.Time{}
	switch a.State {
	case Firing:
		if r.keepSince.IsZero() {
			r.keepSince = now
		}
		if o.KeepFiringFor > 0 && now.Sub(r.keepSince) < o.KeepFiringFor {
			a.Reason = "keep firing for " + FormatDuration(o.KeepFiringFor) + " after the breach"
			return
		}
		a.State, a.ResolvedAt, a.Reason, r.keepSince = Resolved, now, "", time.Time{}
	case Resolved:
		a.Reason = ""
		// Listed as resolved for resolvedFor (as Prometheus keeps resolved
		// alerts), then inactive again: the one-hot exporter state and the
		// alerts pane read "inactive", the episode stays in history.
		if r.resolvedFor > 0 && now.Sub(a.ResolvedAt) >= r.resolvedFor {
			a.State, a.ActiveAt, a.FiredAt, a.Peak = Inactive, time.Time{}, time.Time{}, 0
		}
	default:
		a.State, a.ActiveAt, a.Peak, a.Reason = Inactive, time.Time{}, 0, ""
	}
}

func (r *rule) missing(now time.Time, m measurement) {
	a := &r.alert
	a.Reason = missingReason(m)
	switch a.State {
	case Pending, Firing:
		if a.UnknownSince.IsZero() {
			a.UnknownSince = now
		}
	default:
		st := UnknownState
		if m.data == telemetry.NoData || m.data == telemetry.Unknown || m.data == telemetry.Live {
			st = NoDataState
		}
		if a.State != st {
			// A resolved episode is over and kept in history: the row is
			// unknown (or without data) from now, with no start, end or
			// peak of that episode to pass for a trouble running since.
			a.State, a.UnknownSince = st, now
			a.ActiveAt, a.FiredAt, a.ResolvedAt, a.Peak = time.Time{}, time.Time{}, time.Time{}, 0
		}
	}
}

// MissingDataWords says why there is no figure, from the state of the
// data behind it: "data stale", "source failing", "no data yet" (never
// observed), else "no data". An alert's reason and the TUI's alert line
// both start from it.
func MissingDataWords(data telemetry.State) string {
	switch data {
	case telemetry.Stale:
		return "data stale"
	case telemetry.Error:
		return "source failing"
	case telemetry.Unknown:
		return "no data yet"
	}
	return "no data"
}

// unmeasurable marks an alert whose signal can never come: no episode,
// the reason from the start.
func (r *rule) unmeasurable(now time.Time, m measurement) {
	a := &r.alert
	if a.State != Unmeasurable {
		a.State, a.UnknownSince, a.ActiveAt, a.FiredAt, a.ResolvedAt, a.Peak = Unmeasurable, time.Time{}, time.Time{}, time.Time{}, time.Time{}, 0
	}
	a.Reason = missingReason(m)
}

func missingReason(m measurement) string {
	if m.never {
		return "unmeasurable: " + m.reason
	}
	what := MissingDataWords(m.data)
	if m.reason != "" {
		return what + ": " + m.reason
	}
	return what
}
