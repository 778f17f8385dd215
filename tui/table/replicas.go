package table

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

// Replicas. A model served by several instances (PromQL mode) arrives as
// an aggregate endpoint (Endpoint.Aggregate) and one endpoint per replica
// naming it in Endpoint.Group. The table shows the aggregate row with the
// replica count, "×N"; x expands it to list its replicas right under it,
// indented, and collapses it again. Replicas whose aggregate is not in the
// data are ordinary rows.

// groupRows orders the visible rows: top-level rows as sorted, each
// expanded parent followed by its (visible) replicas, then its adapters,
// by name. A replica or adapter whose parent the filter left out is an
// ordinary row (it matched); a model's only replica is never listed (its
// model row says the same). It counts what is shown (counted).
func (m *Model) groupRows(visible []*Row) []*Row {
	shownParent := map[string]bool{}
	for _, r := range visible {
		if r.Endpoint.Aggregate || m.adapters[r.Name()] > 0 || m.ranks[r.Name()] > 1 {
			shownParent[r.Name()] = true
		}
	}
	members := map[string][]*Row{}
	out := visible[:0:0]
	for _, r := range visible {
		if p := m.parentOf(r); p != "" && shownParent[p] {
			members[p] = append(members[p], r)
			continue
		}
		out = append(out, r)
	}
	grouped := make([]*Row, 0, len(visible))
	m.folded = 0
	for _, r := range out {
		grouped = append(grouped, r)
		ms := members[r.Name()]
		if !m.expanded[r.Name()] {
			m.folded += servingCount(ms)
			continue
		}
		sort.Slice(ms, func(i, j int) bool {
			ai, aj := ms[i].Endpoint.Group == "", ms[j].Endpoint.Group == ""
			return !ai && aj || ai == aj && ms[i].Name() < ms[j].Name()
		})
		for _, c := range ms {
			if c.Endpoint.Group != "" && !c.Endpoint.IsRank() && m.replicas[r.Name()] < 2 {
				m.folded++ // the only replica: its model row says the same
				continue
			}
			grouped = append(grouped, c)
		}
	}
	m.shown = m.counted(grouped, m.folded)
	return grouped
}

// listedAway are the rows listed under a parent on another server (an
// adapter probed through a gateway, under its model's row): they stay
// under their parent, out of the server headers.
func (m *Model) listedAway() map[*Row]bool {
	listed := map[string]bool{}
	for _, r := range m.rows {
		listed[r.Name()] = true
	}
	away := map[*Row]bool{}
	for _, r := range m.rows {
		p := m.parentOf(r)
		if p == "" || !listed[p] || !m.expanded[p] {
			continue
		}
		ps, _, _ := serverOf(p)
		if s, _, _ := serverOf(r.Name()); s != ps {
			away[r] = true
		}
	}
	return away
}

// parentOf is the row a row folds under: a replica's model row, an
// adapter's base row; "" for others.
func (m *Model) parentOf(r *Row) string {
	if g := r.Endpoint.Group; g != "" {
		return g
	}
	return m.bases[r.Name()]
}

// foldable: the row has rows to list under it (two replicas or more, an
// adapter, or two data-parallel ranks or more).
func (m *Model) foldable(name string) bool {
	return m.replicas[name] > 1 || m.adapters[name] > 0 || m.ranks[name] > 1
}

// Counts are what the header and the filter line count: serving
// endpoints (replicas and endpoints that are no model's aggregate; an
// aggregate whose replicas are all gone stands for itself) and, in
// PromQL mode, models (aggregate rows). Shown counts the rows listed and
// the replicas folded under a listed model row.
type Counts struct {
	Endpoints, AllEndpoints int
	Models, AllModels       int
	// Down and Gone count, over all rows, the endpoints whose target is
	// down or no longer known to the store.
	Down, Gone int
}

// serving: the row is one serving endpoint, not a sum over replicas nor
// one rank of a server.
func (m *Model) serving(r *Row) bool {
	return !r.Endpoint.IsRank() && (!r.Endpoint.Aggregate || m.replicas[r.Name()] == 0)
}

// counted fills the shown half of Counts.
func (m *Model) counted(listed []*Row, folded int) Counts {
	c := Counts{Endpoints: folded}
	for _, r := range listed {
		if m.serving(r) {
			c.Endpoints++
		}
		if r.Endpoint.Aggregate {
			c.Models++
		}
	}
	return c
}

// replicaCounts counts each aggregate's replicas in the data.
func replicaCounts(rows []Row) map[string]int {
	n := map[string]int{}
	for i := range rows {
		if g := rows[i].Endpoint.Group; g != "" && !rows[i].Endpoint.IsRank() {
			n[g]++
		}
	}
	return n
}

// ToggleExpand expands or collapses the selected aggregate or base model
// (or the parent of the selected replica or adapter); it reports whether
// there was one.
func (m *Model) ToggleExpand() bool {
	r, ok := m.Selected()
	if !ok {
		return false
	}
	name := r.Name()
	if p := m.parentOf(r); p != "" && m.foldable(p) {
		name = p
	} else if !m.foldable(name) {
		return false
	}
	if m.expanded == nil {
		m.expanded = map[string]bool{}
	}
	m.expanded[name] = !m.expanded[name]
	m.selected = name
	m.refresh()
	return true
}

// replicaLabel is what the ENDPOINT column shows of a row: its name, or
// of a grouped row an aggregate's count or a replica's identity under its
// model; RESTARTED after it while its source marks it restarted.
func (m *Model) replicaLabel(r *Row, name string) string {
	if pool := r.Endpoint.PDPool(); pool != "" && !strings.HasSuffix(r.Name(), "["+pool+"]") {
		// P/D workers scraped on their own are rows of one model at
		// different addresses, as its router is: each says its pool, as
		// PromQL's pools are named, after its name as fitted.
		name += " [" + pool + "]"
	}
	label := m.groupedLabel(r, name)
	if _, _, ok := r.Endpoint.Restarted(); ok {
		// Its rates started afresh: said in words, after the name.
		label += " " + format.RestartedMark
	}
	return label
}

// groupedLabel is a grouped row's count or identity; name for others.
func (m *Model) groupedLabel(r *Row, name string) string {
	if !m.foldable(r.Name()) {
		return m.childLabel(r, name)
	}
	mark := "+"
	if m.expanded[r.Name()] {
		mark = "-"
	}
	label := name
	if n := m.replicas[r.Name()]; n > 1 && r.Endpoint.Aggregate {
		label = m.replicaCount(r, name, n)
	}
	if a := m.adapters[r.Name()]; a > 0 {
		label += fmt.Sprintf(" +%d LoRA", a)
	}
	if n := m.ranks[r.Name()]; n > 1 {
		label += fmt.Sprintf(" dp×%d", n)
	}
	return label + " " + mark
}

// replicaCount is a model row's name with its replicas: "×N", with those
// down ("×N ▼D") or stopped ("×C/N").
func (m *Model) replicaCount(r *Row, name string, n int) string {
	if down, of, ok := r.Endpoint.ReplicasDown(); ok && down > 0 {
		// Some replicas' targets are down or gone: said in the row.
		return fmt.Sprintf("%s ×%d %s%d", name, of, m.ctx.Glyphs.Down, down)
	}
	if counted, of, ok := r.Endpoint.ReplicasCounted(); ok && of > counted {
		// Some replicas stopped: the row's summed figures count only
		// the others.
		return fmt.Sprintf("%s ×%d/%d", name, counted, of)
	}
	return fmt.Sprintf("%s ×%d", name, n)
}

// childLabel is a listed replica's identity or adapter's model, indented
// under its parent; name for other rows.
func (m *Model) childLabel(r *Row, name string) string {
	if g := r.Endpoint.Group; g != "" && m.expanded[g] && r.Endpoint.Replica != "" {
		return "  " + strings.TrimPrefix(r.Endpoint.Replica, m.shared)
	}
	if b := m.bases[r.Name()]; b != "" && m.expanded[b] && r.Endpoint.Model != "" {
		return "  " + common.Safe(r.Endpoint.Model)
	}
	return name
}
