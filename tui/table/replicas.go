package table

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ttftop/ttftop/tui/format"
)

// Replicas. A model served by several instances (PromQL mode) arrives as
// an aggregate endpoint (Endpoint.Aggregate) and one endpoint per replica
// naming it in Endpoint.Group. The table shows the aggregate row with the
// replica count, "×N"; x expands it to list its replicas right under it,
// indented, and collapses it again. Replicas whose aggregate is not in the
// data are ordinary rows.

// groupRows orders the visible rows: top-level rows as sorted, each
// expanded aggregate followed by its (visible) replicas by name. A
// replica whose aggregate the filter left out is an ordinary row (it
// matched); a model's only replica is never listed (its model row says
// the same). It counts what is shown (counted).
func (m *Model) groupRows(visible []*Row) []*Row {
	shownAgg := map[string]bool{}
	for _, r := range visible {
		if r.Endpoint.Aggregate {
			shownAgg[r.Name()] = true
		}
	}
	members := map[string][]*Row{}
	out := visible[:0:0]
	for _, r := range visible {
		if g := r.Endpoint.Group; g != "" && shownAgg[g] {
			members[g] = append(members[g], r)
			continue
		}
		out = append(out, r)
	}
	grouped := make([]*Row, 0, len(visible))
	m.folded = 0
	for _, r := range out {
		grouped = append(grouped, r)
		ms := members[r.Name()]
		if m.expanded[r.Name()] && m.replicas[r.Name()] > 1 && len(ms) > 0 {
			sort.Slice(ms, func(i, j int) bool { return ms[i].Name() < ms[j].Name() })
			grouped = append(grouped, ms...)
		} else {
			m.folded += len(ms)
		}
	}
	m.shown = m.counted(grouped, m.folded)
	return grouped
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

// serving: the row is one serving endpoint, not a sum over replicas.
func (m *Model) serving(r *Row) bool { return !r.Endpoint.Aggregate || m.replicas[r.Name()] == 0 }

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
		if g := rows[i].Endpoint.Group; g != "" {
			n[g]++
		}
	}
	return n
}

// ToggleExpand expands or collapses the selected aggregate (or the
// aggregate of the selected replica); it reports whether there was one.
func (m *Model) ToggleExpand() bool {
	r, ok := m.Selected()
	if !ok {
		return false
	}
	name := r.Name()
	if g := r.Endpoint.Group; g != "" && m.replicas[g] > 1 {
		name = g
	} else if m.replicas[name] < 2 {
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
	label := m.groupedLabel(r, name)
	if _, _, ok := r.Endpoint.Restarted(); ok {
		// Its rates started afresh: said in words, after the name.
		label += " " + format.RestartedMark
	}
	return label
}

// groupedLabel is a grouped row's count or identity; name for others.
func (m *Model) groupedLabel(r *Row, name string) string {
	if n := m.replicas[r.Name()]; n > 1 && r.Endpoint.Aggregate {
		mark := "+"
		if m.expanded[r.Name()] {
			mark = "-"
		}
		if down, of, ok := r.Endpoint.ReplicasDown(); ok && down > 0 {
			// Some replicas' targets are down or gone: said in the row.
			return fmt.Sprintf("%s ×%d %s%d %s", name, of, m.ctx.Glyphs.Down, down, mark)
		}
		if counted, of, ok := r.Endpoint.ReplicasCounted(); ok && of > counted {
			// Some replicas stopped: the row's summed figures count only
			// the others.
			return fmt.Sprintf("%s ×%d/%d %s", name, counted, of, mark)
		}
		return fmt.Sprintf("%s ×%d %s", name, n, mark)
	}
	if g := r.Endpoint.Group; g != "" && m.expanded[g] && r.Endpoint.Replica != "" {
		return "  " + strings.TrimPrefix(r.Endpoint.Replica, m.shared)
	}
	return name
}
