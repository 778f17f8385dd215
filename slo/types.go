// Package slo evaluates service-level objectives over ttftop's telemetry
// and keeps the state and history of breach alerts. It reads the telemetry
// store and observations; it knows nothing of sources or views.
package slo

import (
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Kind of objective.
type Kind string

const (
	// Percentile: the Percentile-quantile of Signal over Window stays below
	// Threshold ("TTFT p95 < 5 s over 5 m").
	Percentile Kind = "percentile"
	// Ratio: at least Target of events are good (Signal ≤ Threshold, and
	// the request succeeded) over Period, alerted with multi-window,
	// multi-burn-rate rules.
	Ratio Kind = "ratio"
	// ErrorRate: failed requests / all requests over Window stays below
	// Threshold (a ratio 0–1).
	ErrorRate Kind = "error_rate"
	// Availability: at least Target of the endpoint's probes succeed over
	// Window (failed probes / probes ≤ 1 − Target). Only probed endpoints
	// have it: it judges ttftop's own requests, the one figure that
	// still exists when the server is dead.
	Availability Kind = "availability"
	// TargetUp: the endpoint's scrape target is up (telemetry.TargetUp,
	// the store's up or ttftop's own scrape), as the usual `up == 0`
	// rule: a replica or scraped endpoint down for For pages; a model row
	// pages when none of its replicas is up and warns when some are not.
	// Only endpoints whose target health is known have it.
	TargetUp Kind = "target_up"
)

// Objective is one promise about one or more endpoints.
type Objective struct {
	Name string `json:"name"`
	// Endpoint is an endpoint name or a path.Match pattern; "" or "*" = all.
	Endpoint   string           `json:"endpoint,omitempty"`
	Kind       Kind             `json:"kind"`
	Signal     telemetry.Signal `json:"signal"`
	Percentile float64          `json:"percentile,omitempty"` // 0.95
	Threshold  float64          `json:"threshold"`            // base units: seconds, ratio
	Window     time.Duration    `json:"window,omitempty"`
	// For is how long a breach must last before the alert fires.
	For time.Duration `json:"for,omitempty"`
	// KeepFiringFor keeps a firing alert firing this long after it stops
	// breaching, against flapping.
	KeepFiringFor time.Duration `json:"keep_firing_for,omitempty"`
	Target        float64       `json:"target,omitempty"` // Ratio: 0.99
	Period        time.Duration `json:"period,omitempty"` // Ratio: 28 d
	// BurnWindows are the Ratio alert rules; nil = SRE workbook defaults
	// scaled to Period.
	BurnWindows []BurnWindow `json:"burn_windows,omitempty"`
	// Severity is the Alertmanager severity label of Percentile and
	// ErrorRate alerts (empty = "warning"). A Ratio objective has one alert
	// per severity of its burn windows (page, ticket).
	Severity string `json:"severity,omitempty"`
}

// BurnWindow is one multi-window burn-rate rule: fire when the burn rate
// over both Long and Short exceeds Factor.
type BurnWindow struct {
	Factor float64       `json:"factor"`
	Long   time.Duration `json:"long"`
	Short  time.Duration `json:"short"`
	// Severity is "page" or "ticket"; empty = page when Factor ≥ 6.
	Severity string `json:"severity,omitempty"`
}

// State of an alert.
type State string

const (
	Inactive State = "inactive"
	Pending  State = "pending"
	Firing   State = "firing"
	Resolved State = "resolved"
	// NoDataState: the source answered but there is nothing to judge.
	NoDataState State = "no_data"
	// UnknownState: data is stale or its source failed. A firing alert
	// keeps firing and is marked unknown since then; it never resolves on
	// missing data.
	UnknownState State = "unknown"
	// Unmeasurable: the endpoint's sources can never give the objective's
	// signal (its engine has no such metric, and no probe measures it):
	// said from the start, with why in Reason, instead of waiting for data
	// that will not come. It never fires and never counts as failing.
	Unmeasurable State = "unmeasurable"
)

// Open reports whether an alert in state s is listed among the open ones
// (Engine.Alerts, the alerts pane): firing, pending, unknown, no data and
// unmeasurable; inactive and resolved are not.
func Open(s State) bool {
	switch s {
	case Firing, Pending, UnknownState, NoDataState, Unmeasurable:
		return true
	}
	return false
}

// Alert is the evaluation of one objective on one endpoint, with history.
type Alert struct {
	Objective string           `json:"objective"`
	Endpoint  string           `json:"endpoint"`
	Kind      Kind             `json:"kind"`
	Signal    telemetry.Signal `json:"signal"`
	State     State            `json:"state"`
	// Unknown is set while the data behind a pending or firing alert is
	// stale or failing: the alert keeps its state, "unknown since".
	UnknownSince time.Time `json:"unknown_since,omitzero"`
	Reason       string    `json:"reason,omitempty"`
	// ActiveAt is when the breach started (pending), FiredAt when it fired,
	// ResolvedAt when it resolved.
	ActiveAt   time.Time `json:"active_at,omitzero"`
	FiredAt    time.Time `json:"fired_at,omitzero"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	// Value is the measured figure (base units), Threshold the objective's
	// (base units), Peak the worst value while active.
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Peak      float64 `json:"peak,omitempty"`
	// Unit names the base unit of Value, Threshold and Peak: "s" for
	// latencies, "ratio" (0–1) for error rates and availability,
	// "burn_rate" (× the budget's pace) for ratio objectives.
	Unit string `json:"unit"`
	// Approx: the value is interpolated inside a histogram bucket.
	Approx    bool       `json:"approx,omitempty"`
	BurnRates []BurnRate `json:"burn_rates,omitempty"`
	// BudgetRemaining (Ratio) is the share of the error budget left over
	// the period: 1 untouched, 0 spent, negative when overspent.
	BudgetRemaining *float64 `json:"budget_remaining,omitempty"`
	// BudgetSpan is how much of the period the events behind
	// BudgetRemaining cover (at most the period): a budget judged on 25 s
	// of a 28-day period says little, and views must say so.
	BudgetSpan time.Duration `json:"budget_span,omitempty"`

	// Description says the objective in words ("TTFT p95 ≤ 5s over 5m").
	Description string `json:"description,omitempty"`
	// Severity is the Alertmanager severity label (page, ticket, warning).
	Severity string `json:"severity,omitempty"`
	// Data is the state of the data behind Value (live, stale, no_data,
	// error, unknown), so views never show an old figure as fresh.
	Data telemetry.State `json:"data"`
	// Count is how many samples or events Value rests on.
	Count float64 `json:"count,omitempty"`
	// Source names the source kind the value came from (probe, scrape…).
	Source string `json:"source,omitempty"`
	// EvaluatedAt is the time of the evaluation that produced this alert.
	EvaluatedAt time.Time `json:"evaluated_at,omitzero"`
}

// BurnRate is the measured burn rate over one window.
type BurnRate struct {
	Window time.Duration `json:"window"`
	Rate   float64       `json:"rate"` // NaN-free: omitted when unknown
	Factor float64       `json:"factor"`
}

// Badge is the one-word SLO state of an endpoint, shown in words as well as
// colour.
type Badge string

const (
	BadgeOK      Badge = "OK"
	BadgePending Badge = "PENDING"
	BadgeBreach  Badge = "BREACH"
	BadgeStale   Badge = "STALE"
	BadgeNoData  Badge = "NO DATA"
	BadgeError   Badge = "ERROR"
	BadgeNone    Badge = "—" // no objective applies
)
