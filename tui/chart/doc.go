// Package chart draws ttftop's small charts as text: sparklines, line
// charts with an SLO threshold and breach shading, and horizontal bars.
//
// Sparklines (table rows, GPU trends) are ntcharts/v2 sparklines one row
// high; the detail view's TTFT/TPOT charts are ntcharts/v2 linecharts
// (X = point index, Y = value), braille through canvas/graph's
// BrailleGrid, or in --ascii mode linechart rune lines ('|' joins, '*'
// points). The y labels, the x axis that doubles as the breach strip
// (readable without colour) and the time labels are text drawn here.
// Bars stay this package's own (no ntcharts chart asked for there).
//
// Around ntcharts' pitfalls: every size is clamped to ≥ 1
// cell before a chart is made (zero width panics); the scale is set from
// the visible data each frame (its auto-range only grows); a NaN breaks
// the line and leaves a sparkline cell blank, and every finite value
// draws at least the lowest block, so missing never reads as zero.
// timeserieslinechart is not used: it joins every point of a data set (no
// gaps) and truncates times to whole seconds, so 1-minute windows at
// 2 points a cell collapse. Sparkline columns are block elements only
// (graph.DrawColumnRune refuses other runes), so ASCII mode maps each of
// the eight heights to an ASCII level when the canvas is written out.
//
// Canvases are written out here, one SGR pair per run of same-styled
// cells, not with canvas.View(), which renders each cell through its own
// lipgloss style. Measured (go test ./tui/chart -bench ., medians of 3,
// 2-core shared machine): 8-cell sparkline 7 µs here vs 42 µs with
// canvas.View(); 81×12 chart 0.2 ms vs 2.4 ms (BenchmarkLine81x12*).
// Charts are pooled by size and the drawn cells blanked after reading:
// every ntcharts cell holds a lipgloss.Style (~680 B), and a new canvas
// or Canvas.Clear allocates them all again (81×10: ~0.5 MB).
//
// Cost against the previous own renderers (interleaved A/B, medians of
// 5): Spark 0.7 → 8 µs, Line 81×12 0.07 → 0.24 ms, BenchmarkView200 (a
// full 200-row frame) 0.32 → 0.82 ms, BenchmarkDetailView 0.30 → 0.60
// ms. In the program this does not show: bench/tui_bandwidth.sh at
// 160×50 over 60 s, medians of 3, synthetic main screen 755 → 778 B/s
// and 0.60 → 0.63 % CPU, detail view 1189 → 1183 B/s and 2.75 → 2.90 %
// CPU (noise on this machine is ±0.3 %), so ntcharts is kept.
package chart
