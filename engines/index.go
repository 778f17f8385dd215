package engines

import (
	"sort"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// Table is the alias table with its lookup indexes, built once by
// NewTable and read-only afterwards (safe for concurrent use). The package
// functions All, Lookup, Detect and Names build a fresh one per call;
// sources that detect on every scrape keep a Table.
type Table struct {
	specs   []Spec
	byName  map[string][]int // family name → specs reading it
	markers map[string][]int // marker name → specs
	names   []string         // every name read, plus _created companions
	want    map[string]bool
}

// NewTable builds the table.
func NewTable() *Table {
	t := &Table{specs: All(), byName: map[string][]int{}, markers: map[string][]int{}, want: map[string]bool{}}
	for i, s := range t.specs {
		for _, n := range s.Names() {
			t.byName[n] = append(t.byName[n], i)
		}
		for _, m := range s.Markers {
			t.markers[m] = append(t.markers[m], i)
		}
	}
	t.names = Names()
	for _, n := range t.names {
		t.want[n] = true
	}
	return t
}

// Lookup returns the spec of engine e (shared: do not modify).
func (t *Table) Lookup(e telemetry.Engine) (Spec, bool) {
	for _, s := range t.specs {
		if s.Engine == e {
			return s, true
		}
	}
	return Spec{}, false
}

// Wants reports whether any engine reads family name (or it is a
// "_created" companion of one).
func (t *Table) Wants(name string) bool { return t.want[name] }

// Detect is the package-level Detect using the table's indexes.
func (t *Table) Detect(names []string) Detection {
	score := make([]int, len(t.specs))
	recognised := make([][]string, len(t.specs))
	prefixHit := make([]bool, len(t.specs))
	dcgm := false
	for _, n := range names {
		for _, i := range t.byName[n] {
			score[i] += 2
			recognised[i] = append(recognised[i], n)
		}
		for _, i := range t.markers[n] {
			score[i] += 3
		}
		for i, s := range t.specs {
			if !prefixHit[i] {
				for _, p := range s.Prefixes {
					if strings.HasPrefix(n, p) {
						prefixHit[i] = true
						break
					}
				}
			}
		}
		dcgm = dcgm || strings.HasPrefix(n, "DCGM_FI_")
	}
	best, bestScore := -1, 0
	var any []string
	for i := range t.specs {
		if prefixHit[i] {
			score[i]++
		}
		any = append(any, recognised[i]...)
		if score[i] > bestScore {
			best, bestScore = i, score[i]
		}
	}
	if best < 0 {
		d := Detection{Engine: telemetry.EngineUnknown, Recognised: dedupe(any)}
		if dcgm {
			d.Exporter = "dcgm-exporter"
		}
		return d
	}
	rec := recognised[best]
	sort.Strings(rec)
	return Detection{Engine: t.specs[best].Engine, Recognised: rec}
}
