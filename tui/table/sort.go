package table

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/format"
)

// sortKeys are the columns `s` cycles through.
func sortKeys() []Col {
	return []Col{ColName, ColSLO, ColTTFT, ColTPOT, ColTPS, ColRunWait, ColKV, ColDRAM, ColMBU}
}

// sortValue is the number a row sorts by in column c; ok is false when
// unknown, and unknown rows always sort last, whatever the direction.
// TTFT and TPOT sort by their p99 (the tail, what breaches first); the
// header's arrow marks it ("TTFT p50/▼p99").
func sortValue(c Col, r *Row) (float64, bool) {
	pick := func(sig telemetry.Signal, p99 bool) (float64, bool) {
		s, ok := r.Sig(sig)
		if !ok {
			return 0, false
		}
		switch {
		case p99 && s.P99 != nil:
			return *s.P99, true
		case !p99 && s.Value != nil:
			return *s.Value, true
		}
		return 0, false
	}
	switch c {
	case ColSLO:
		return float64(format.BadgeRank(r.Badge)), true
	case ColTTFT:
		return pick(telemetry.TTFT, true)
	case ColTPOT:
		return pick(telemetry.TPOT, true)
	case ColRunWait:
		return pick(telemetry.Waiting, false)
	}
	return pick(defs()[c].sig, false)
}

// sortRows orders rows by column c (descending when desc), ties by name.
// SLO sorts worst first by default: "descending" there means worst last.
func sortRows(rows []*Row, c Col, desc bool) {
	slices.SortStableFunc(rows, func(a, b *Row) int {
		if c == ColName {
			r := NaturalCompare(a.Name(), b.Name())
			if desc {
				r = -r
			}
			return r
		}
		va, oka := sortValue(c, a)
		vb, okb := sortValue(c, b)
		switch {
		case oka && !okb:
			return -1
		case !oka && okb:
			return 1
		}
		r := cmp.Compare(va, vb)
		if desc {
			r = -r
		}
		if r == 0 {
			r = NaturalCompare(a.Name(), b.Name())
		}
		return r
	})
}

// NaturalCompare orders names as people count: m2 before m10, gpu-9
// before gpu-10; digit runs compare by value, the rest byte by byte.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if r := cmp.Compare(len(na), len(nb)); r != 0 {
				return r
			}
			if r := strings.Compare(na, nb); r != 0 {
				return r
			}
			if r := cmp.Compare(da, db); r != 0 { // 007 after 7: keep the order total
				return r
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// matches reports whether the row matches the filter (lower-cased):
// name, model, engine, badge or any label value.
func matches(r *Row, f string) bool {
	if f == "" {
		return true
	}
	ep := r.Endpoint
	if containsFold(ep.Name, f) || containsFold(ep.Model, f) || containsFold(string(ep.Engine), f) || containsFold(string(r.Badge), f) {
		return true
	}
	for k, v := range ep.Labels {
		if containsFold(k+"="+v, f) {
			return true
		}
	}
	return false
}

func containsFold(s, lowerSub string) bool {
	return strings.Contains(strings.ToLower(s), lowerSub)
}
