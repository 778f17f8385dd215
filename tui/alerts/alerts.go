// Package alerts is the alerts pane: firing, pending, unknown and recently
// resolved SLO alerts with their start, duration and value vs objective.
package alerts

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/tui/common"
)

// RecentResolved is how long a resolved alert stays listed.
const RecentResolved = 15 * time.Minute

// Model is the pane.
type Model struct {
	ctx     *common.Context
	list    []slo.Alert
	cursor  int
	offset  int
	focused bool
	width   int
	height  int
	counts  Counts

	// allNames are every endpoint shown; alert rows name theirs so that
	// it reads apart from all of them (short, under shortKey).
	allNames []string
	nameNeed int // widest endpoint and objective of the list
	objNeed  int
	// objMin is the least the objective column takes: a severity whole
	// and minObjective cells of the objective before it.
	objMin   int
	short    map[string]string
	shortObj map[string]string
	shortKey common.Hash

	// causes is each unwell endpoint's diagnosis: its leading cause
	// follows the value on the endpoint's alert lines.
	causes map[string]diagnosis.Diagnosis
}

// SetCauses gives the diagnoses that name a cause, by endpoint.
func (m *Model) SetCauses(c map[string]diagnosis.Diagnosis) { m.causes = c }

// SetNames gives the names of every endpoint on screen.
func (m *Model) SetNames(names []string) { m.allNames = names }

// Counts summarise the open alerts for the header.
type Counts struct{ Firing, Pending, Unknown, NoData, Resolved int }

// New returns an empty pane.
func New(ctx *common.Context) Model { return Model{ctx: ctx} }

// rank orders what needs attention first.
func rank(a slo.Alert) int {
	switch a.State {
	case slo.Firing:
		return 0
	case slo.UnknownState:
		return 1
	case slo.Pending:
		return 2
	case slo.NoDataState:
		return 3
	case slo.Unmeasurable:
		return 4
	case slo.Resolved:
		return 5
	}
	return 6
}

// Shown reports whether an alert is listed at now.
func Shown(a slo.Alert, now time.Time) bool {
	if slo.Open(a.State) {
		return true
	}
	return a.State == slo.Resolved && !a.ResolvedAt.IsZero() && now.Sub(a.ResolvedAt) <= RecentResolved
}

// SetAlerts replaces the list.
func (m *Model) SetAlerts(all []slo.Alert) {
	now := m.ctx.Now
	m.list = m.list[:0]
	m.counts = Counts{}
	m.nameNeed, m.objNeed, m.objMin = 0, 0, 0
	for _, a := range all {
		if !Shown(a, now) {
			continue
		}
		m.list = append(m.list, a)
		m.nameNeed = max(m.nameNeed, common.Width(common.Safe(a.Endpoint)))
		m.objNeed = max(m.objNeed, common.Width(objectiveName(a)))
		if sev := severity(a); sev != "" {
			m.objMin = max(m.objMin, min(common.Width(objectiveName(a)), minObjective+1+common.Width(sev)))
		}
		switch a.State {
		case slo.Firing:
			m.counts.Firing++
		case slo.Pending:
			m.counts.Pending++
		case slo.UnknownState:
			m.counts.Unknown++
		case slo.NoDataState:
			m.counts.NoData++
		case slo.Resolved:
			m.counts.Resolved++
		}
	}
	slices.SortStableFunc(m.list, func(a, b slo.Alert) int {
		if r := cmp.Compare(rank(a), rank(b)); r != 0 {
			return r
		}
		if r := b.ActiveAt.Compare(a.ActiveAt); r != 0 {
			return r // newest first
		}
		return strings.Compare(a.Endpoint+a.Objective, b.Endpoint+b.Objective)
	})
	m.clamp()
}

// Counts returns the open alert counts.
func (m *Model) Counts() Counts { return m.counts }

// Len is the number of listed alerts.
func (m *Model) Len() int { return len(m.list) }

// SetSize sets the pane box (height includes the title line).
func (m *Model) SetSize(w, h int) { m.width, m.height = max(w, 0), max(h, 0); m.clamp() }

// Focus marks the pane as the one keys go to.
func (m *Model) Focus(on bool) { m.focused = on }

func (m *Model) page() int { return max(m.height-1, 1) }

func (m *Model) clamp() {
	n := len(m.list)
	m.cursor = min(max(m.cursor, 0), max(n-1, 0))
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+m.page() {
		m.offset = m.cursor - m.page() + 1
	}
	m.offset = min(max(m.offset, 0), max(n-m.page(), 0))
}

// Page moves the cursor by the alerts drawn (negative = up).
func (m *Model) Page(dir int) { m.Move(dir * m.page()) }

// Move moves the cursor.
func (m *Model) Move(d int) { m.cursor += d; m.clamp() }

// Home selects the first alert.
func (m *Model) Home() { m.cursor = 0; m.clamp() }

// End selects the last alert.
func (m *Model) End() { m.cursor = len(m.list) - 1; m.clamp() }

// Click selects the alert drawn at line y of the pane (0 = title).
func (m *Model) Click(y int) bool {
	i := m.offset + y - 1
	if y < 1 || i >= len(m.list) {
		return false
	}
	m.cursor = i
	m.clamp()
	return true
}

// Selected returns the alert under the cursor.
func (m *Model) Selected() (slo.Alert, bool) {
	if len(m.list) == 0 {
		return slo.Alert{}, false
	}
	return m.list[m.cursor], true
}

// View renders exactly height lines.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	st := m.ctx.Styles
	g := m.ctx.Glyphs
	c := m.counts
	title := "ALERTS"
	parts := []string{}
	for _, p := range []struct {
		n    int
		word string
	}{{c.Firing, "firing"}, {c.Unknown, "unknown"}, {c.Pending, "pending"}, {c.NoData, "no data"}, {c.Resolved, "recently resolved"}} {
		if p.n > 0 {
			parts = append(parts, itoa(p.n)+" "+p.word)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none open")
	}
	title += " " + strings.Join(parts, ", ")
	if m.focused {
		title = g.Sel + title
	} else {
		title = " " + title
	}
	lines := []string{st.Title.S(common.Fit(title, m.width, g.Ellipsis))}
	m.ensureShort(m.columns().name)
	end := min(m.offset+m.page(), len(m.list))
	for i := m.offset; i < end; i++ {
		lines = append(lines, m.line(m.list[i], m.focused && i == m.cursor))
	}
	for len(lines) < m.height {
		lines = append(lines, "")
	}
	return strings.Join(lines[:m.height], "\n")
}

func itoa(n int) string { return figures.Number(float64(n)) }
