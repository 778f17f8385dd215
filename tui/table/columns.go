package table

import (
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/format"
)

// Col identifies a column.
type Col int

// Columns in display order.
const (
	ColName Col = iota
	ColModel
	ColEngine
	ColTTFT
	ColTTFTSpark
	ColTPOT
	ColTPOTSpark
	ColTPS
	ColSource
	ColRunWait
	ColKV
	ColDRAM
	ColMBU
	ColSLO
	// ColWhy is the leading cause of the row's diagnosis in a word; it is
	// placed last, so it only takes room no other column wants.
	ColWhy
	numCols
)

type colDef struct {
	title string
	width int  // fixed width (name: minimum)
	prio  int  // lower is kept longer when narrow
	right bool // right-aligned numbers
	// sig is the signal a figure column shows; spark columns reuse it.
	sig telemetry.Signal
}

// whyWidth fits the longest cause word ("gpu_slowdown", "prefix_cache").
const whyWidth = 12

// whyMinName is the name column's width below which WHY is left out.
const whyMinName = 32

// SparkWidth is the sparkline columns' width: one point per cell.
const SparkWidth = 8

func defs() [numCols]colDef {
	return [numCols]colDef{
		ColName:      {title: "ENDPOINT", width: 16, prio: 0},
		ColModel:     {title: "MODEL", width: 18, prio: 10},
		ColEngine:    {title: "ENGINE", width: 8, prio: 11},
		ColTTFT:      {title: "TTFT p50/p99", width: 13, prio: 1, right: true, sig: telemetry.TTFT},
		ColTTFTSpark: {title: "ttft", width: SparkWidth, prio: 4, sig: telemetry.TTFT},
		ColTPOT:      {title: "TPOT p50/p99", width: 13, prio: 2, right: true, sig: telemetry.TPOT},
		ColTPOTSpark: {title: "tpot", width: SparkWidth, prio: 7, sig: telemetry.TPOT},
		ColTPS:       {title: "TOK/S", width: 7, prio: 3, right: true, sig: telemetry.OutputTPS},
		// Whose figures the latency columns are: the client's (probe) or
		// the engine's own (server); never mixed in one row silently.
		ColSource:  {title: "SRC", width: 6, prio: 3},
		ColRunWait: {title: "RUN/WAIT", width: 9, prio: 5, right: true, sig: telemetry.Running},
		ColKV:      {title: "KV%", width: 5, prio: 6, right: true, sig: telemetry.KVCache},
		ColDRAM:    {title: "DRAM%", width: 6, prio: 9, right: true, sig: telemetry.GPUMemBW},
		// MBU is measured (the engine's bytes counter) or estimated
		// (weights and KV over the step time): the "~" before an
		// estimated figure says which, as in the detail and JSON.
		ColMBU: {title: "MBU", width: 5, prio: 8, right: true, sig: telemetry.MBU},
		ColSLO: {title: "SLO", width: 7, prio: 0},
		ColWhy: {title: "WHY", width: whyWidth, prio: 12},
	}
}

// placed is a column chosen for the current width.
type placed struct {
	col   Col
	width int
}

// fit picks the columns that fit in width (one cell for the selection
// marker, one space between columns), dropping by priority, and gives the
// name column the rest (up to 32 cells; beyond that the model widens).
// Without model the MODEL column is left out: it would repeat the names;
// with charts, the sparklines.
func fit(width int, model, charts bool) []placed {
	d := defs()
	chosen := [numCols]bool{}
	if charts { // the charts under each row say what the sparklines would
		chosen[ColTTFTSpark], chosen[ColTPOTSpark] = true, true
	}
	used := 1 + d[ColName].width
	chosen[ColName] = true
	for prio := 0; prio <= 12; prio++ {
		for c := Col(0); c < numCols; c++ {
			if chosen[c] || d[c].prio != prio || (c == ColModel && !model) {
				continue
			}
			if used+1+d[c].width <= width {
				chosen[c] = true
				used += 1 + d[c].width
			}
		}
	}
	// The cause word is worth less than legible names: WHY takes only
	// room the name column does not need to reach whyMinName.
	if chosen[ColWhy] && width-used+d[ColName].width < whyMinName {
		chosen[ColWhy] = false
		used -= 1 + d[ColWhy].width
	}
	if charts {
		chosen[ColTTFTSpark], chosen[ColTPOTSpark] = false, false
	}
	out := make([]placed, 0, numCols)
	for c := Col(0); c < numCols; c++ {
		if chosen[c] {
			out = append(out, placed{c, d[c].width})
		}
	}
	spare := width - used
	for i := range out {
		if out[i].col == ColName && spare > 0 {
			add := min(spare, 48-out[i].width)
			out[i].width += add
			spare -= add
		}
	}
	for i := range out {
		if out[i].col == ColModel && spare > 0 {
			add := min(spare, 14)
			out[i].width += add
			spare -= add
		}
	}
	// What is left widens the sparklines (a wide terminal shows more of
	// the window's history, one bin a cell), both alike.
	if chosen[ColTTFTSpark] && chosen[ColTPOTSpark] && spare >= 2 {
		add := min(spare/2, maxSparkWidth-SparkWidth)
		for i := range out {
			if out[i].col == ColTTFTSpark || out[i].col == ColTPOTSpark {
				out[i].width += add
			}
		}
	}
	return out
}

// maxSparkWidth caps the widened sparklines.
const maxSparkWidth = 40

// sparkWidth is the widest sparkline column placed.
func sparkWidth(cols []placed) int {
	w := SparkWidth
	for _, p := range cols {
		if p.col == ColTTFTSpark || p.col == ColTPOTSpark {
			w = max(w, p.width)
		}
	}
	return w
}

// figure returns the live text of a figure column for r ("" if none).
func figure(c Col, r *Row, unknown string) (telemetry.SignalSnapshot, bool, string) {
	d := defs()[c]
	s, ok := r.Sig(d.sig)
	switch c {
	case ColTTFT, ColTPOT:
		return s, ok, format.Pair(s)
	case ColRunWait:
		w, wok := r.Sig(telemetry.Waiting)
		if !ok && wok {
			s, ok = w, true
		}
		run, wait := unknown, unknown
		if rs := format.Scalar(r.Endpoint.Signals[telemetry.Running]); rs != "" {
			run = rs
		}
		if ws := format.Scalar(w); ws != "" {
			wait = ws
		}
		if run == unknown && wait == unknown {
			return s, ok, ""
		}
		return s, ok, run + "/" + wait
	}
	return s, ok, format.Scalar(s)
}
