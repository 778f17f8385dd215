package alerts

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
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
	case slo.Unmeasurable:
		// Never measurable here: nothing to wait for (the reason says why).
		return "N/A", format.NoData
	case slo.Resolved:
		return "RESOLVED", format.OK
	}
	return strings.ToUpper(string(a.State)), format.Unknown
}

// line renders one alert: state, endpoint, objective (with severity),
// start (when wide), duration, then value vs objective with the window
// pair; then, as room allows, peak, budget and the reason or "unknown
// since". Endpoint and objective are shortened so that rows stay apart
// (m.short), and the value is never cut while the name can give way.
func (m *Model) line(a slo.Alert, sel bool) string {
	ctx := m.ctx
	g := ctx.Glyphs
	roles := ctx.Styles.Row(sel)
	word, kind := stateWord(a)
	start := a.ActiveAt
	if a.State == slo.UnknownState || a.State == slo.NoDataState {
		// No episode runs: the row dates from when its data went missing.
		start = a.UnknownSince
	}
	dur := ctx.Now.Sub(start)
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
		durText = figures.Duration(dur)
	}
	lay := m.columns()
	var b strings.Builder
	mark := " "
	if sel {
		mark = g.Sel
	}
	b.WriteString(roles.Accent.S(mark))
	b.WriteString(ctx.Paint(roles, kind).S(common.Fit(word, stateWidth, g.Ellipsis)))
	fields := []field{
		{m.shortName(a.Endpoint, lay.name), lay.name, roles.Text},
		{m.shortObjective(a, lay.obj), lay.obj, roles.Faint},
	}
	if lay.clock {
		fields = append(fields, field{when, 14, roles.Faint})
	}
	fields = append(fields, field{durText, durWidth, roles.Text})
	for _, f := range fields {
		b.WriteString(roles.Text.S(" "))
		b.WriteString(f.paint.S(common.Fit(f.text, f.w, g.Ellipsis)))
	}
	room := m.width - lay.used - 1
	mainText, extras := valueParts(a, g, room)
	b.WriteString(roles.Text.S(" "))
	b.WriteString(ctx.Paint(roles, kind).S(common.Fit(mainText, min(common.Width(mainText), max(room, 0)), g.Ellipsis)))
	room -= common.Width(mainText)
	// Why, before anything else that may go: the leading cause's summary,
	// else its word alone ("kv_cache") where the line is short.
	if c := m.causeWords(a, room); c != "" {
		b.WriteString(roles.Accent.S(c))
		room -= common.Width(c)
	}
	for _, e := range extras {
		if w := 1 + common.Width(e); w <= room {
			b.WriteString(ctx.Paint(roles, kind).S(" " + e))
			room -= w
		}
	}
	why := ""
	if !a.UnknownSince.IsZero() {
		why = "unknown since " + common.Clock(a.UnknownSince) + " (" + missingWords(a) + ")"
	} else if a.Reason != "" {
		why = common.Safe(a.Reason)
	}
	// Cut after a whole word: "unknown sin…" reads as nothing.
	if why = common.CutAtWord(why, room-3, g.Ellipsis); why != "" {
		b.WriteString(roles.Stale.S(" " + g.Dot + " " + why))
	}
	return common.Cut(b.String(), m.width)
}

// causeWords is " · why: <summary>" for the alert's endpoint when its
// diagnosis names a cause and room allows, else " · <cause>", else "". A
// resolved alert has no cause: the endpoint may be unwell for another
// reason since.
func (m *Model) causeWords(a slo.Alert, room int) string {
	d, ok := m.causes[a.Endpoint]
	if !ok || !d.Named() || !slo.Open(a.State) {
		return ""
	}
	dot := m.ctx.Glyphs.Dot
	f := d.Causes[0]
	more := ""
	if len(d.Causes) > 1 {
		more = " +" + strconv.Itoa(len(d.Causes)-1)
	}
	word := " " + dot + " " + string(f.Cause)
	for _, c := range []string{" " + dot + " why: " + common.Safe(f.Summary) + more, word + more, word} {
		if common.Width(c) <= room {
			return c
		}
	}
	return ""
}

// missingWords says what is true of the data behind an unknown or no-data
// alert: never observed, answered with nothing, old, or failing.
func missingWords(a slo.Alert) string {
	if a.Data == telemetry.NoData {
		// The source did answer: not the same as never observed.
		if a.Count == 0 {
			return "source answered, no data yet"
		}
		return "source answered with no data"
	}
	return slo.MissingDataWords(a.Data)
}

// field is one fixed-width cell of an alert line.
type field struct {
	text  string
	w     int
	paint themes.Paint
}

const (
	stateWidth = 8 // "RESOLVED"
	durWidth   = 6 // "59m59s" fits, "1h02m" too
)

// lineLayout is the widths of an alert line's fixed fields.
type lineLayout struct {
	name, obj int
	clock     bool // the start time ("since 13:21:42"), when wide
	used      int  // cells before the value
}

func (m *Model) columns() lineLayout {
	l := lineLayout{clock: m.width >= 120}
	// As wide as the longest name needs, up to a share of the line; a
	// share the objectives leave goes to the names.
	nameCap := min(max(m.width/4, 12), 36)
	objCap := min(max(m.width/7, 10), 24)
	l.name = min(nameCap, max(m.nameNeed, 8))
	l.obj = max(min(objCap+nameCap-l.name, max(m.objNeed, 6)), m.objMin)
	l.name = min(nameCap+objCap-l.obj, max(m.nameNeed, 8))
	l.used = 1 + stateWidth + 1 + l.name + 1 + l.obj + 1 + durWidth
	if l.clock {
		l.used += 1 + 14
	}
	return l
}

// shortName is the alert's endpoint shortened among every endpoint shown.
func (m *Model) shortName(ep string, w int) string {
	if s, ok := m.short[ep]; ok {
		return s
	}
	return common.FitMiddle(common.Safe(ep), w, m.ctx.Glyphs.Ellipsis)
}

func (m *Model) shortObjective(a slo.Alert, w int) string {
	name := objectiveName(a)
	if s, ok := m.shortObj[name]; ok {
		return s
	}
	return common.FitMiddle(name, w, m.ctx.Glyphs.Ellipsis)
}

// ensureShort recomputes the shortened names when the list, the
// endpoints or the widths changed.
func (m *Model) ensureShort(nameW int) {
	// The names shortened, and the room: the input of what is cached.
	shown := make([][2]string, len(m.list))
	for i, a := range m.list {
		shown[i] = [2]string{a.Endpoint, objectiveName(a)}
	}
	k := common.NewHash()
	k.Value([]any{m.width, nameW, m.allNames, shown})
	if k == m.shortKey && m.short != nil {
		return
	}
	m.shortKey = k
	var eps []string
	for _, a := range m.list {
		eps = append(eps, common.Safe(a.Endpoint))
	}
	among := eps
	if len(m.allNames) > 0 {
		among = append(slices.Clone(m.allNames), eps...)
	}
	ell := m.ctx.Glyphs.Ellipsis
	m.short = common.NewNamer(among, ell).Fit(eps, among, nameW)
	m.shortObj = shortObjectives(m.list, m.columns().obj, ell)
}

// minObjective is what an objective keeps beside its severity.
const minObjective = 7

// shortObjectives fits each alert's objective name in w cells: the
// severity ("page", "ticket") stays whole and the objective is shortened
// the same way for each of its severities, among the objectives, so the
// two alerts of one objective read as one objective twice.
func shortObjectives(list []slo.Alert, w int, ell string) map[string]string {
	sevW := map[string]int{} // objective → its widest " severity"
	var objs []string
	for _, a := range list {
		obj := common.Safe(a.Objective)
		if _, seen := sevW[obj]; !seen {
			objs = append(objs, obj)
			sevW[obj] = 0
		}
		if sev := severity(a); sev != "" {
			sevW[obj] = max(sevW[obj], 1+common.Width(sev))
		}
	}
	namer := common.NewNamer(objs, ell)
	short := map[string]string{}
	for _, obj := range objs {
		short[obj] = namer.Fit([]string{obj}, objs, max(w-sevW[obj], 1))[obj]
	}
	out := map[string]string{}
	for _, a := range list {
		text := short[common.Safe(a.Objective)]
		if sev := severity(a); sev != "" {
			text += " " + sev
		}
		out[objectiveName(a)] = text
	}
	return out
}

// severity is the alert's severity when its objective has several alerts
// (a ratio objective's page and ticket), else "".
func severity(a slo.Alert) string {
	if a.Kind == slo.Ratio && a.Severity != "" {
		return common.Safe(a.Severity)
	}
	return ""
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
	if sev := severity(a); sev != "" {
		return common.Safe(a.Objective) + " " + sev
	}
	return common.Safe(a.Objective)
}

// valueVsObjective: "TTFT 812ms > 500ms peak 1.2s", "err 2.1% > 1%", or
// for burn-rate objectives the deciding pair's burn rates against its
// factor, its windows and the budget left.
func valueVsObjective(a slo.Alert, g themes.Glyphs) string {
	main, extras := valueParts(a, g, 1<<20)
	return strings.Join(append([]string{main}, extras...), " ")
}

// valueParts is the value against the threshold (what must be read:
// never dropped), then what may go when room (cells) is short.
func valueParts(a slo.Alert, g themes.Glyphs, room int) (string, []string) {
	info := a.Signal.Info()
	if a.Kind == slo.Ratio {
		return burnParts(a, g, room)
	}
	if a.State == slo.NoDataState {
		return "no data vs " + figures.Value(a.Threshold*info.Scale, info.Unit), nil
	}
	if a.State == slo.Unmeasurable {
		return info.Title + " " + g.Unknown + " vs " + figures.Value(a.Threshold*info.Scale, info.Unit), nil
	}
	if a.State == slo.UnknownState && a.Count == 0 {
		// Nothing measured behind it: missing is never zero.
		return info.Title + " " + g.Unknown + " vs " + figures.Value(a.Threshold*info.Scale, info.Unit), nil
	}
	if a.Kind == slo.TargetUp {
		return slo.TargetUpClaim(a.Value), nil
	}
	v := figures.Value(a.Value*info.Scale, info.Unit)
	if a.Approx {
		v = "~" + v
	}
	main := info.Title + " " + v + cmpWord(a.Value, a.Threshold, g) + figures.Value(a.Threshold*info.Scale, info.Unit)
	var extras []string
	if a.State == slo.Firing && !(a.Value > a.Threshold) {
		// Back within the objective but still firing: keep-firing-for
		// holds it against flapping; said, or the row reads as a bug.
		extras = append(extras, "held by keep-firing-for")
	}
	if a.Peak > a.Value && a.State != slo.Resolved {
		extras = append(extras, "peak "+figures.Value(a.Peak*info.Scale, info.Unit))
	}
	return main, extras
}

// burnParts: "burn 100×/98× > 14.4× over 1h/5m", the long and the short
// window's rates of the deciding pair (the one that fired, or the one
// closest to firing). Both must exceed the factor to fire, so a resolved
// or pending row shows which one does not ("vs").
func burnParts(a slo.Alert, g themes.Glyphs, room int) (string, []string) {
	info := a.Signal.Info()
	x := "×"
	if g.ASCII {
		x = "x"
	}
	var extras []string
	if a.BudgetRemaining != nil {
		left := *a.BudgetRemaining
		if left <= 0 {
			extras = append(extras, "budget spent")
		} else {
			extras = append(extras, "budget "+figures.Percent(left*100)+" left")
		}
	}
	if a.Threshold <= 0 || math.IsNaN(a.Value) || len(a.BurnRates) == 0 {
		return "objective " + figures.Value(a.Threshold*info.Scale, info.Unit), extras
	}
	var rates []string
	above := true
	for _, br := range a.BurnRates {
		if br.Factor == a.Threshold {
			rates = append(rates, figures.Number(br.Rate)+x)
			above = above && br.Rate > br.Factor
		}
	}
	if len(rates) == 0 {
		rates, above = []string{figures.Number(a.Value) + x}, a.Value > a.Threshold
	}
	cmp := " > "
	if !above {
		cmp = " vs "
	}
	main := "burn " + strings.Join(rates, "/") + cmp + figures.Number(a.Threshold) + x
	if w := pairWindows(a); w != "" {
		if common.Width(main+" over "+w) <= room {
			main += " over " + w
		} else {
			main += " " + w
		}
	}
	return main, extras
}

// pairWindows names the deciding pair's windows, "1h/5m": the burn rates
// of a pair are listed long then short, with the pair's factor.
func pairWindows(a slo.Alert) string {
	var ws []string
	for _, br := range a.BurnRates {
		if br.Factor == a.Threshold {
			// Scaled demo windows are not whole seconds (1m4.285714s).
			ws = append(ws, slo.FormatDuration(br.Window.Round(time.Second)))
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
