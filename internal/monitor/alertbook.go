package monitor

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// alertKey names one alert as the engine keys its rules.
type alertKey struct{ objective, endpoint, severity string }

func keyOf(a slo.Alert) alertKey { return alertKey{a.Objective, a.Endpoint, a.Severity} }

// alertBook keeps the alert state a recording's transitions describe: the
// latest transition of every alert (its state, as live showed it) and the
// last resolved ones (live's alert history), as the engine keeps them.
type alertBook struct {
	mu       sync.Mutex
	latest   map[alertKey]slo.Alert
	resolved []slo.Alert // oldest first
	keep     int
	bad      int // lines that were not transitions
}

func newAlertBook(history int) *alertBook {
	if history <= 0 {
		history = 100 // slo.Options.History's default
	}
	return &alertBook{latest: map[alertKey]slo.Alert{}, keep: history}
}

func (b *alertBook) apply(raw json.RawMessage) {
	var tr slo.Transition
	if err := json.Unmarshal(raw, &tr); err != nil || tr.Alert.Objective == "" {
		b.mu.Lock()
		b.bad++
		b.mu.Unlock()
		return
	}
	a := tr.Alert
	a.State = tr.To
	b.mu.Lock()
	defer b.mu.Unlock()
	b.latest[keyOf(a)] = a
	if tr.To == slo.Resolved {
		if len(b.resolved) >= b.keep {
			b.resolved = append(b.resolved[:0], b.resolved[1:]...)
		}
		b.resolved = append(b.resolved, a)
	}
}

// overlay gives each of the engine's rows the state live recorded for it:
// a row without a recorded transition never left the inactive state. The
// figures (value, burn rates, data state, evaluation time) stay the
// engine's, which judges the same observations with the same objectives;
// alerts the engine does not have are added as recorded.
func (b *alertBook) overlay(rows []slo.Alert) []slo.Alert {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := make(map[alertKey]bool, len(rows))
	out := make([]slo.Alert, 0, len(rows))
	for _, a := range rows {
		k := keyOf(a)
		seen[k] = true
		rec, ok := b.latest[k]
		switch {
		case !ok:
			// Live's inactive alerts have no reason and no times.
			a.State, a.Reason, a.Peak = slo.Inactive, "", 0
			a.UnknownSince, a.ActiveAt, a.FiredAt, a.ResolvedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		case a.EvaluatedAt.IsZero():
			a = rec // nothing judged yet: the recorded figures too
		default:
			if a.State != rec.State {
				a.Reason = rec.Reason
			}
			engine := a
			a.State, a.UnknownSince, a.ActiveAt, a.FiredAt, a.ResolvedAt, a.Peak = rec.State, rec.UnknownSince, rec.ActiveAt, rec.FiredAt, rec.ResolvedAt, rec.Peak
			a.Peak = livePeak(rec, engine)
		}
		out = append(out, a)
	}
	for k, a := range b.latest {
		if !seen[k] {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b slo.Alert) int {
		return cmp.Or(strings.Compare(a.Endpoint, b.Endpoint), strings.Compare(a.Objective, b.Objective),
			strings.Compare(a.Severity, b.Severity))
	})
	return out
}

// livePeak is the peak live showed for an alert still active: live
// raises it on every evaluation but records it only with a transition, so
// the recorded one is the peak at the last transition. The engine judges
// the same observations: its value, and its peak while it holds the
// alert active too, are values live saw since.
func livePeak(rec, engine slo.Alert) float64 {
	if rec.State != slo.Pending && rec.State != slo.Firing {
		return rec.Peak
	}
	peak := rec.Peak
	if engine.Data == telemetry.Live {
		peak = max(peak, engine.Value)
	}
	if engine.State == slo.Pending || engine.State == slo.Firing {
		peak = max(peak, engine.Peak)
	}
	return peak
}

// resolvedSince returns the resolved alerts kept that resolved at or after
// since.
func (b *alertBook) resolvedSince(since time.Time) []slo.Alert {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []slo.Alert
	for _, a := range b.resolved {
		if !a.ResolvedAt.Before(since) {
			out = append(out, a)
		}
	}
	return out
}

// history is slo.Engine.History from the book: the firing rows, newest
// first, then the resolved alerts, newest first.
func (b *alertBook) history(rows []slo.Alert) []slo.Alert {
	var out []slo.Alert
	for _, a := range rows {
		if a.State == slo.Firing {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b slo.Alert) int { return b.FiredAt.Compare(a.FiredAt) })
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.resolved) - 1; i >= 0; i-- {
		out = append(out, b.resolved[i])
	}
	return out
}

// sortAlerts orders an alert list as slo.Engine.Alerts does.
func sortAlerts(as []slo.Alert) { slices.SortStableFunc(as, slo.CompareAlerts) }

// badgeOf is slo.Engine.Badge over one endpoint's rows.
func badgeOf(rows []slo.Alert) slo.Badge { return slo.BadgeOf(rows) }
