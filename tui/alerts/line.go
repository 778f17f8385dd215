package alerts

import (
	"math"
	"strings"

	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/themes"
	"github.com/tokentop/tokentop/tui/common"
	"github.com/tokentop/tokentop/tui/format"
)

func stateWord(a slo.Alert) (string, format.Kind) {
	switch a.State {
	case slo.Firing:
		return "FIRING", format.Error
	case slo.Pending:
		return "PENDING", format.Warn
	case slo.UnknownState:
		return "UNKNOWN", format.Stale
	case slo.NoDataState:
		return "NO DATA", format.NoData
	case slo.Resolved:
		return "RESOLVED", format.OK
	}
	return strings.ToUpper(string(a.State)), format.Unknown
}

// line renders one alert: state, endpoint, objective, start, duration,
// value vs objective, then the reason or "unknown since".
func (m *Model) line(a slo.Alert, sel bool) string {
	ctx := m.ctx
	g := ctx.Glyphs
	roles := ctx.Styles.Row(sel)
	word, kind := stateWord(a)
	start, dur := a.ActiveAt, ctx.Now.Sub(a.ActiveAt)
	if a.State == slo.Resolved && !a.ResolvedAt.IsZero() {
		dur = a.ResolvedAt.Sub(a.ActiveAt)
	}
	when := "since " + common.Clock(start)
	if a.State == slo.Resolved {
		when = "ended " + common.Clock(a.ResolvedAt)
	}
	if start.IsZero() {
		when, dur = "", -1
	}
	durText := ""
	if dur >= 0 {
		durText = format.Duration(dur)
	}
	var b strings.Builder
	mark := " "
	if sel {
		mark = g.Sel
	}
	b.WriteString(roles.Accent.S(mark))
	b.WriteString(ctx.Paint(roles, kind).S(common.Fit(word, 8, g.Ellipsis)))
	nameW := min(max(m.width/5, 10), 28)
	objW := min(max(m.width/6, 10), 24)
	fields := []struct {
		text  string
		w     int
		paint themes.Paint
	}{
		{common.Safe(a.Endpoint), nameW, roles.Text},
		{objectiveName(a), objW, roles.Faint},
		{when, 14, roles.Faint},
		{durText, 7, roles.Text},
	}
	for _, f := range fields {
		b.WriteString(roles.Text.S(" "))
		b.WriteString(f.paint.S(common.Fit(f.text, f.w, g.Ellipsis)))
	}
	b.WriteString(roles.Text.S(" "))
	b.WriteString(ctx.Paint(roles, kind).S(valueVsObjective(a, g)))
	extra := ""
	if !a.UnknownSince.IsZero() {
		extra = " " + g.Dot + " unknown since " + common.Clock(a.UnknownSince) + " (data stale or failing)"
	} else if a.Reason != "" {
		extra = " " + g.Dot + " " + common.Safe(a.Reason)
	}
	if extra != "" {
		b.WriteString(roles.Stale.S(extra))
	}
	out := common.Cut(b.String(), m.width)
	return out
}

// Describe is one alert in words for other views (the detail view's
// objectives): its state word and kind, and "objective: value vs
// threshold".
func Describe(a slo.Alert, g themes.Glyphs) (word string, kind format.Kind, text string) {
	word, kind = stateWord(a)
	if a.State == slo.Inactive {
		word, kind = "OK", format.OK
	}
	return word, kind, objectiveName(a) + ": " + valueVsObjective(a, g)
}

// objectiveName is the objective, with the severity when one objective
// has several alerts (a ratio objective's page and ticket).
func objectiveName(a slo.Alert) string {
	if a.Kind == slo.Ratio && a.Severity != "" {
		return common.Safe(a.Objective + " " + a.Severity)
	}
	return common.Safe(a.Objective)
}

// valueVsObjective: "p 812ms > 500ms", "err 2.1% > 1%", or for burn-rate
// objectives the worst burn against its factor and the budget left.
func valueVsObjective(a slo.Alert, g themes.Glyphs) string {
	info := a.Signal.Info()
	if a.Kind == slo.Ratio {
		// The deciding window pair (the alert's Value and Threshold): the
		// one that fired, or the one closest to firing; its windows named.
		var parts []string
		if a.Threshold > 0 && !math.IsNaN(a.Value) && len(a.BurnRates) > 0 {
			x := "×"
			if g.ASCII {
				x = "x"
			}
			t := "burn " + format.Number(a.Value) + x + cmpWord(a.Value, a.Threshold, g) + format.Number(a.Threshold) + x
			if w := pairWindows(a); w != "" {
				t += " over " + w
			}
			parts = append(parts, t)
		}
		if a.BudgetRemaining != nil {
			parts = append(parts, "budget "+format.Percent(*a.BudgetRemaining*100))
		}
		if len(parts) == 0 {
			return "objective " + format.Value(a.Threshold*info.Scale, info.Unit)
		}
		return strings.Join(parts, " ")
	}
	if a.State == slo.NoDataState {
		return "no data vs " + format.Value(a.Threshold*info.Scale, info.Unit)
	}
	v := format.Value(a.Value*info.Scale, info.Unit)
	if a.Approx {
		v = "~" + v
	}
	out := info.Title + " " + v + cmpWord(a.Value, a.Threshold, g) + format.Value(a.Threshold*info.Scale, info.Unit)
	if a.Peak > a.Value && a.State != slo.Resolved {
		out += " peak " + format.Value(a.Peak*info.Scale, info.Unit)
	}
	return out
}

// pairWindows names the deciding pair's windows, "1h/5m": the burn rates
// of a pair are listed long then short, with the pair's factor.
func pairWindows(a slo.Alert) string {
	var ws []string
	for _, br := range a.BurnRates {
		if br.Factor == a.Threshold {
			ws = append(ws, slo.FormatDuration(br.Window))
		}
	}
	if len(ws) != 2 {
		return ""
	}
	return ws[0] + "/" + ws[1]
}

func cmpWord(v, thr float64, g themes.Glyphs) string {
	if v > thr {
		return " > "
	}
	if g.ASCII {
		return " <= "
	}
	return " ≤ "
}
