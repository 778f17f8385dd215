package table

import (
	"strings"

	"github.com/tokentop/tokentop/tui/common"
)

// Model is the endpoint table.
type Model struct {
	ctx  *common.Context
	all  []Row
	rows []*Row // filtered and sorted view of all

	sortCol Col
	desc    bool
	model   bool   // MODEL adds something to the names (see modelAddsSomething)
	shared  string // "host:port/" every row's name starts with, shown once in the header
	filter  Filter

	cursor   int    // index into rows
	selected string // endpoint name kept across re-sorts
	offset   int    // first visible row

	width, height int
	cols          []placed
	// chartMemo caches each row's charts under a hash of what they show:
	// they change once a bin, not every frame.
	chartMemo map[string]*common.Memo
	// replicas counts each aggregate's replicas; expanded are the
	// aggregates whose replicas are listed (replicas.go).
	replicas map[string]int
	expanded map[string]bool
	folded   int // replicas of shown aggregates not listed (collapsed)
}

// Invalidate drops cached drawings (theme change).
func (m *Model) Invalidate() { clear(m.chartMemo) }

// New returns an empty table.
func New(ctx *common.Context) Model {
	return Model{ctx: ctx, sortCol: ColName}
}

// SetRows replaces the data, keeping sort, filter and the selected
// endpoint.
func (m *Model) SetRows(rows []Row) {
	m.all = rows
	if model := modelAddsSomething(rows); model != m.model {
		m.model = model
		m.cols = fit(m.width, m.model)
	}
	m.shared = sharedServer(rows)
	m.replicas = replicaCounts(rows)
	m.refresh()
}

// sharedServer is the "host:port/" prefix of every row's name when two or
// more rows share one server: the header says it once and the rows show
// what tells them apart.
func sharedServer(rows []Row) string {
	if len(rows) < 2 {
		return ""
	}
	first := rows[0].Endpoint.Name
	i := strings.IndexByte(first, '/')
	if i <= 0 {
		return ""
	}
	prefix := first[:i+1]
	for j := range rows {
		if n := rows[j].Endpoint.Name; !strings.HasPrefix(n, prefix) || len(n) == len(prefix) {
			return ""
		}
	}
	return prefix
}

// displayName is the row's name as the ENDPOINT column shows it.
func (m *Model) displayName(r *Row) string {
	return m.replicaLabel(r, strings.TrimPrefix(r.Name(), m.shared))
}

// modelAddsSomething: some endpoint's name does not already say its model
// (a configured name like "llama-prod").
func modelAddsSomething(rows []Row) bool {
	for i := range rows {
		ep := &rows[i].Endpoint
		if ep.Model != "" && !strings.HasSuffix(ep.Name, ep.Model) {
			return true
		}
	}
	return false
}

// refresh re-derives the visible rows after data, sort or filter changed.
func (m *Model) refresh() {
	f := strings.ToLower(m.filter.Value())
	m.rows = m.rows[:0]
	for i := range m.all {
		if matches(&m.all[i], f) {
			m.rows = append(m.rows, &m.all[i])
		}
	}
	sortRows(m.rows, m.sortCol, m.desc)
	m.rows = m.groupRows(m.rows)
	m.cursor = 0
	for i, r := range m.rows {
		if r.Name() == m.selected {
			m.cursor = i
			break
		}
	}
	m.clamp()
}

// SetSize sets the table's box; height includes the column header line.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.cols = fit(m.width, m.model)
	m.clamp()
}

func (m *Model) pageSize() int { return max(m.height-1, 1) }

// clamp keeps cursor and offset valid and the cursor visible.
func (m *Model) clamp() {
	n := len(m.rows)
	m.cursor = min(max(m.cursor, 0), max(n-1, 0))
	ps := m.pageSize()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+ps {
		m.offset = m.cursor - ps + 1
	}
	m.offset = min(max(m.offset, 0), max(n-ps, 0))
	if n > 0 {
		m.selected = m.rows[m.cursor].Name()
	}
}

// Move moves the cursor by delta rows.
func (m *Model) Move(delta int) {
	m.cursor += delta
	m.clamp()
}

// Home and End jump to the first or last row.
func (m *Model) Home() { m.cursor = 0; m.clamp() }

// End jumps to the last row.
func (m *Model) End() { m.cursor = len(m.rows) - 1; m.clamp() }

// Page moves by a screenful (negative = up).
func (m *Model) Page(dir int) { m.Move(dir * m.pageSize()) }

// Scroll moves the view (mouse wheel) and drags the cursor along only if
// it would leave the screen.
func (m *Model) Scroll(delta int) {
	ps := m.pageSize()
	m.offset = min(max(m.offset+delta, 0), max(len(m.rows)-ps, 0))
	if m.cursor < m.offset {
		m.cursor = m.offset
	}
	if m.cursor >= m.offset+ps {
		m.cursor = m.offset + ps - 1
	}
	m.clamp()
}

// Click selects the row drawn at line y of the table (0 = column header);
// it reports whether a row was hit.
func (m *Model) Click(y int) bool {
	i := m.offset + y - 1
	if y < 1 || i >= len(m.rows) || y > m.pageSize() {
		return false
	}
	m.cursor = i
	m.clamp()
	return true
}

// CycleSort moves to the next sort column, worst-first by default.
func (m *Model) CycleSort() {
	keys := sortKeys()
	next := keys[0]
	for i, k := range keys {
		if k == m.sortCol {
			next = keys[(i+1)%len(keys)]
		}
	}
	m.sortCol = next
	m.desc = next != ColName && next != ColSLO
	m.refresh()
}

// ReverseSort flips the direction.
func (m *Model) ReverseSort() { m.desc = !m.desc; m.refresh() }

// Sort reports the sort column and direction.
func (m *Model) Sort() (Col, bool) { return m.sortCol, m.desc }

// Filter gives access to the filter input.
func (m *Model) Filter() *Filter { return &m.filter }

// FilterChanged re-applies the filter after an edit.
func (m *Model) FilterChanged() { m.refresh() }

// Selected returns the selected row.
func (m *Model) Selected() (*Row, bool) {
	if len(m.rows) == 0 {
		return nil, false
	}
	return m.rows[m.cursor], true
}

// Counts reports shown and total rows; the replicas of a collapsed
// aggregate count as shown (the filter let them through).
func (m *Model) Counts() (shown, total int) { return len(m.rows) + m.folded, len(m.all) }

// Row returns the row of endpoint name, filtered out or not.
func (m *Model) Row(name string) (*Row, bool) {
	for i := range m.all {
		if m.all[i].Name() == name {
			return &m.all[i], true
		}
	}
	return nil, false
}
