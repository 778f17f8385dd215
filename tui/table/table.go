package table

import (
	"strings"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
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

	// items are the drawn lines: rows, and a header line above the rows
	// of each server that has several (host:port said once); itemOf maps
	// a row index to its item.
	items  []item
	itemOf []int
	// names are the ENDPOINT cells' text, shortened so that the rows
	// stay apart (common.Distinct), under namesKey.
	names    map[string]string
	namesKey common.Hash

	cursor   int    // index into rows
	selected string // endpoint name kept across re-sorts
	offset   int    // first visible item

	width, height int
	cols          []placed
	unfocused     bool // the keys go to another pane: no cursor drawn
	// chartMemo caches each row's charts under a hash of what they show:
	// they change once a bin, not every frame.
	chartMemo map[string]*common.Memo
	// replicas counts each aggregate's replicas; expanded are the
	// aggregates whose replicas are listed (replicas.go).
	replicas map[string]int
	expanded map[string]bool
	// bases maps each LoRA adapter row to its base model's row; adapters
	// counts each base's adapters (adapters.go).
	bases    map[string]string
	adapters map[string]int
	folded   int    // replicas of shown aggregates not listed (collapsed)
	shown    Counts // the shown half, as of the last refresh
	// ranks counts each row's data-parallel ranks (ranks.go).
	ranks map[string]int
}

// Focus says whether the keys go to the table (its cursor is drawn).
func (m *Model) Focus(on bool) { m.unfocused = !on }

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
	m.model = modelAddsSomething(rows)
	m.shared = sharedServer(rows)
	m.replicas = replicaCounts(rows)
	m.bases = adapterBases(rows)
	m.adapters = adapterCounts(m.bases)
	m.ranks = rankCounts(rows)
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
	server, _, ok := serverOf(first)
	if !ok {
		return ""
	}
	i := len(server)
	prefix := first[:i+1]
	for j := range rows {
		if n := rows[j].Endpoint.Name; !strings.HasPrefix(n, prefix) || len(n) == len(prefix) {
			return ""
		}
	}
	return prefix
}

// item is one drawn line of the table: a row (row ≥ 0), or the header of
// a server group (row < 0).
type item struct {
	row     int
	server  string
	members []*Row
}

// groupIndent is how far a grouped row's name sits under its server.
const groupIndent = 1

// serverOf splits "host:port/model" into the server and the rest; ok is
// false for names without both (a configured name, a bare server).
func serverOf(name string) (server, rest string, ok bool) {
	i := strings.IndexByte(name, '/')
	if i <= 0 || i == len(name)-1 || !strings.Contains(name[:i], ":") {
		return "", name, false // "meta-llama/…" is an organisation, not a server
	}
	return name[:i], name[i+1:], true
}

// group reorders the sorted rows so that the rows of a server with
// several stand together under one header, at the place of its first
// (best-sorted) row; servers with one row keep a plain, full-name row.
// When every row is on one server, the column title names it instead.
func (m *Model) group() {
	m.items = m.items[:0]
	count := map[string]int{}
	away := m.listedAway()
	if m.shared == "" {
		for _, r := range m.rows {
			if s, _, ok := serverOf(r.Name()); ok && !away[r] {
				count[s]++
			}
		}
	}
	grouped := make([]*Row, 0, len(m.rows))
	done := map[string]bool{}
	for _, r := range m.rows {
		s, _, ok := serverOf(r.Name())
		if !ok || count[s] < 2 || away[r] {
			m.items = append(m.items, item{row: len(grouped)})
			grouped = append(grouped, r)
			continue
		}
		if done[s] {
			continue
		}
		done[s] = true
		head := item{row: -1, server: s}
		at := len(m.items)
		m.items = append(m.items, head)
		for _, r2 := range m.rows {
			if s2, _, ok2 := serverOf(r2.Name()); ok2 && s2 == s && !away[r2] {
				m.items[at].members = append(m.items[at].members, r2)
				m.items = append(m.items, item{row: len(grouped), server: s})
				grouped = append(grouped, r2)
			}
		}
	}
	m.rows = append(m.rows[:0], grouped...)
	m.itemOf = m.itemOf[:0]
	for i, it := range m.items {
		if it.row >= 0 {
			m.itemOf = append(m.itemOf, i)
		}
	}
}

// nameWidth is the width of the ENDPOINT column (0 without one).
func (m *Model) nameWidth() int {
	for _, p := range m.cols {
		if p.col == ColName {
			return p.width
		}
	}
	return 0
}

// layoutNames shortens the ENDPOINT cells so the rows stay apart: a
// grouped row's name without its server, among its group; others among
// the other ungrouped rows.
func (m *Model) layoutNames() {
	w := m.nameWidth()
	k := common.NewHash()
	k.Int(w)
	k.Str(m.shared)
	for _, it := range m.items {
		k.Int(it.row)
		k.Str(it.server)
		if it.row >= 0 {
			k.Str(m.rows[it.row].Name())
			k.Int(m.replicas[m.rows[it.row].Name()])                              // "×N" takes from the name's width
			k.Int(m.adapters[m.rows[it.row].Name()])                              // and "+N LoRA"
			k.Int(m.ranks[m.rows[it.row].Name()])                                 // and "dp×N"
			k.Str(m.rows[it.row].Endpoint.Labels[telemetry.LabelReplicasCounted]) // and "×N/M"
			k.Str(m.rows[it.row].Endpoint.Labels[telemetry.LabelReplicasDown])    // and "×N, D down"
		}
	}
	if k == m.namesKey && m.names != nil {
		return
	}
	m.namesKey = k
	m.names = map[string]string{}
	// Words are weighed over every name shown ("Instruct" on most rows
	// goes first), rows told apart within their group.
	var plain, corpus []string
	rel := make([][]string, len(m.items))
	for i, it := range m.items {
		switch {
		case it.row < 0:
			for _, r := range it.members {
				_, rest, _ := serverOf(r.Name())
				rel[i] = append(rel[i], common.Safe(rest))
			}
			corpus = append(corpus, rel[i]...)
		case it.server == "":
			plain = append(plain, m.plainName(m.rows[it.row]))
		}
	}
	namer := common.NewNamer(append(corpus, plain...), m.ctx.Glyphs.Ellipsis)
	for _, it := range m.items {
		if it.row >= 0 && it.server == "" {
			r := m.rows[it.row]
			if n := groupPart(r.Endpoint.Endpoint, m.plainName(r)); n > 0 {
				namer.Keep(m.plainName(r), n)
			}
		}
	}
	for i, it := range m.items {
		if it.row < 0 {
			short := namer.Fit(rel[i], rel[i], w-groupIndent)
			for j, r := range it.members {
				m.names[r.Name()] = common.Spaces(groupIndent) + short[rel[i][j]]
			}
		}
	}
	// A model row's "×2 +" takes from its name's width.
	for _, it := range m.items {
		if it.row >= 0 && it.server == "" {
			r := m.rows[it.row]
			name := m.plainName(r)
			m.names[r.Name()] = namer.Fit([]string{name}, plain, w-common.Width(m.replicaLabel(r, "")))[name]
		}
	}
}

// groupPart is how many leading bytes of name (as shown) are its group
// (PromQL group_by values, and a replica's identity): all but the model
// it ends with, for a model row or a replica; 0 for other rows.
func groupPart(ep telemetry.Endpoint, name string) int {
	if (!ep.Aggregate && ep.Group == "") || ep.Model == "" || !strings.HasSuffix(name, "/"+ep.Model) {
		return 0
	}
	return len(name) - len(ep.Model)
}

func (m *Model) plainName(r *Row) string { return common.Safe(strings.TrimPrefix(r.Name(), m.shared)) }

// displayName is the row's name as the ENDPOINT column shows it.
func (m *Model) displayName(r *Row) string {
	name, ok := m.names[r.Name()]
	if !ok {
		name = m.plainName(r)
	}
	return m.replicaLabel(r, name)
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
	m.group()
	m.refit()
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
	m.refit()
	m.clamp()
}

// refit places the columns for the width, the MODEL need and whether rows
// carry charts (then no sparklines), and shortens the names to fit.
func (m *Model) refit() {
	m.cols = fit(m.width, m.model, m.chartHeight() > 0)
	m.layoutNames()
}

// pageSize is how many items (lines) fit under the column header.
func (m *Model) pageSize() int { return max(m.height-1, 1) }

// Lines is how many lines the table uses with every row's chart at
// chartHeight (column header included; compact rows have none): the
// layout gives what is left to the alerts and the GPU panel first.
func (m *Model) Lines() int { return 1 + max(len(m.items), 1) + len(m.rows)*m.chartHeight() }

// clamp keeps cursor and offset valid and the cursor visible (with its
// group's header when that fits).
func (m *Model) clamp() {
	n := len(m.rows)
	m.cursor = min(max(m.cursor, 0), max(n-1, 0))
	ps := m.pageSize()
	at := m.cursorItem()
	top := at
	if at > 0 && m.items[at].server != "" && m.items[at-1].row < 0 {
		top = at - 1 // the first row of a group: show its header too
	}
	if top < m.offset {
		m.offset = top
	}
	if at >= m.offset+ps {
		m.offset = at - ps + 1
	}
	m.offset = min(max(m.offset, 0), max(len(m.items)-ps, 0))
	if n > 0 {
		m.selected = m.rows[m.cursor].Name()
	}
}

// cursorItem is the item of the selected row (0 without rows).
func (m *Model) cursorItem() int {
	if m.cursor < len(m.itemOf) {
		return m.itemOf[m.cursor]
	}
	return 0
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
	m.offset = min(max(m.offset+delta, 0), max(len(m.items)-ps, 0))
	for m.cursor > 0 && m.cursorItem() >= m.offset+ps {
		m.cursor--
	}
	for m.cursor < len(m.rows)-1 && m.cursorItem() < m.offset {
		m.cursor++
	}
	off := m.offset
	m.clamp()
	m.offset = off // the view stays where the wheel put it
}

// Click selects the row drawn at line y of the table (0 = column header);
// it reports whether a row was hit (a server's header line selects its
// first row).
func (m *Model) Click(y int) bool {
	if y < 1 || y >= m.height {
		return false
	}
	line := 1
	for i := m.offset; i < len(m.items); i++ {
		h := 1
		if m.items[i].row >= 0 {
			h += m.rowChartLines(m.items[i].row)
		}
		if y < line+h {
			it := m.items[i]
			if it.row < 0 {
				if i+1 >= len(m.items) {
					return false
				}
				it = m.items[i+1]
			}
			m.cursor = it.row
			m.clamp()
			return true
		}
		line += h
	}
	return false
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

// Names lists every endpoint's name (filtered out or not), sanitised.
func (m *Model) Names() []string {
	out := make([]string, len(m.all))
	for i := range m.all {
		out[i] = common.Safe(m.all[i].Name())
	}
	return out
}

// Counts reports the serving endpoints and models shown and in all; the
// replicas of a collapsed aggregate count as shown (the filter let them
// through).
func (m *Model) Counts() Counts {
	c := m.shown
	for i := range m.all {
		r := &m.all[i]
		if m.serving(r) {
			c.AllEndpoints++
		}
		if r.Endpoint.Aggregate {
			c.AllModels++
		}
		if r.Endpoint.IsRank() {
			continue // its server's row counts it down or gone
		}
		if h, ok := r.Endpoint.Target(); ok && h.State == telemetry.TargetGone {
			c.Gone++
		} else if ok {
			c.Down++
		}
	}
	return c
}

// Row returns the row of endpoint name, filtered out or not.
func (m *Model) Row(name string) (*Row, bool) {
	for i := range m.all {
		if m.all[i].Name() == name {
			return &m.all[i], true
		}
	}
	return nil, false
}
