package slo

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// stateRank orders alert lists: what needs a human first.
func stateRank(s State) int {
	switch s {
	case Firing:
		return 0
	case Pending:
		return 1
	case UnknownState:
		return 2
	case NoDataState:
		return 3
	case Unmeasurable:
		return 4
	case Resolved:
		return 5
	}
	return 6
}

// Alerts returns the open alerts (firing, pending, unknown, no data,
// unmeasurable) and
// the alerts resolved within Options.ResolvedFor of the last evaluation,
// sorted firing, pending, unknown, no data, unmeasurable, resolved; within a state the
// oldest trouble first, resolved ones newest first.
func (e *Engine) Alerts() []Alert {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Alert
	for _, r := range e.rules {
		if Open(r.alert.State) {
			out = append(out, r.alert)
		}
	}
	since := e.lastEval.Add(-e.opts.ResolvedFor)
	for _, a := range e.history {
		if !a.ResolvedAt.Before(since) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, CompareAlerts)
	return out
}

// CompareAlerts orders alert lists: firing, pending, unknown, no data,
// resolved; within a state the oldest trouble first, resolved ones newest
// first (what Alerts returns, and what a replay rebuilds).
func CompareAlerts(a, b Alert) int {
	if d := stateRank(a.State) - stateRank(b.State); d != 0 {
		return d
	}
	if a.State == Resolved {
		if d := b.ResolvedAt.Compare(a.ResolvedAt); d != 0 {
			return d
		}
	} else if d := troubleSince(a).Compare(troubleSince(b)); d != 0 {
		return d
	}
	return cmp.Or(strings.Compare(a.Objective, b.Objective), strings.Compare(a.Endpoint, b.Endpoint),
		strings.Compare(a.Severity, b.Severity))
}

// troubleSince is when an alert's current trouble began.
func troubleSince(a Alert) time.Time {
	if a.State == Pending || a.State == Firing {
		return a.ActiveAt
	}
	return a.UnknownSince
}

// Current returns every objective on every endpoint with its latest
// figures, whatever the state (inactive included), in objective order:
// the SLO panel's rows.
func (e *Engine) Current() []Alert {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Alert, len(e.rules))
	for i, r := range e.rules {
		out[i] = r.alert
	}
	slices.SortStableFunc(out, func(a, b Alert) int {
		return cmp.Or(strings.Compare(a.Endpoint, b.Endpoint), strings.Compare(a.Objective, b.Objective),
			strings.Compare(a.Severity, b.Severity))
	})
	return out
}

// History returns the alerts that fired: those firing now, then the
// resolved ones kept (at most Options.History), newest first. Each carries
// its start (ActiveAt, FiredAt), end (ResolvedAt), peak and objective.
func (e *Engine) History() []Alert {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Alert
	for _, r := range e.rules {
		if r.alert.State == Firing {
			out = append(out, r.alert)
		}
	}
	slices.SortStableFunc(out, func(a, b Alert) int { return b.FiredAt.Compare(a.FiredAt) })
	for i := len(e.history) - 1; i >= 0; i-- {
		out = append(out, e.history[i])
	}
	return out
}

// Badge is the one-word SLO state of an endpoint at now: BREACH when an
// alert fires, PENDING, then ERROR, STALE and NO DATA when the data behind
// an objective is failing, old or absent, else OK; BadgeNone when no
// objective applies. An OK older than Options.EvalStaleAfter is STALE.
func (e *Engine) Badge(endpoint string, now time.Time) Badge {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs, known := e.byEndpoint[endpoint]
	if !known {
		for i := range e.objs {
			if e.objs[i].Matches(endpoint) {
				return BadgeNoData // applies, not evaluated yet
			}
		}
		return BadgeNone
	}
	if len(rs) == 0 {
		return BadgeNone
	}
	rows := make([]Alert, len(rs))
	for i, r := range rs {
		rows[i] = r.alert
	}
	badge := BadgeOf(rows)
	rank := badgeRank(badge)
	if rank < 3 && !e.lastEval.IsZero() && now.Sub(e.lastEval) > e.opts.EvalStaleAfter {
		return BadgeStale
	}
	return badge
}

// BadgeOf is the badge of one endpoint's alerts: BREACH when one fires,
// PENDING, then ERROR, STALE and NO DATA from the data behind them, else
// OK; unmeasurable objectives count for nothing, and an endpoint with
// only those has none (BadgeNone).
func BadgeOf(rows []Alert) Badge {
	badge, rank, judged := BadgeOK, 0, false
	for _, a := range rows {
		if a.State == Unmeasurable {
			continue // never judged: neither OK nor failing
		}
		judged = true
		b := BadgeOK
		switch {
		case a.State == Firing:
			b = BadgeBreach
		case a.State == Pending:
			b = BadgePending
		case a.EvaluatedAt.IsZero():
			b = BadgeNoData
		case a.Data == telemetry.Error:
			b = BadgeError
		case a.Data == telemetry.Stale:
			b = BadgeStale
		case a.State == NoDataState || a.State == UnknownState:
			b = BadgeNoData
		}
		if k := badgeRank(b); k > rank {
			badge, rank = b, k
		}
	}
	if !judged && len(rows) > 0 {
		return BadgeNone // every objective there is unmeasurable
	}
	return badge
}

func badgeRank(b Badge) int {
	switch b {
	case BadgeBreach:
		return 6
	case BadgePending:
		return 5
	case BadgeError:
		return 4
	case BadgeStale:
		return 3
	case BadgeNoData:
		return 2
	}
	return 0
}
