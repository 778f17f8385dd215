// Package chart draws tokentop's small charts as text: sparklines, line
// charts with an SLO threshold and breach shading, and horizontal bars.
//
// Sparklines are ntcharts/v2 sparklines and the detail view's TTFT/TPOT
// charts ntcharts/v2 linecharts (braille through canvas/graph, or rune
// lines in ASCII mode). Around ntcharts' pitfalls (docs tui.md §3):
// every size is clamped to ≥ 1 cell before a chart is made; the scale is
// recomputed from the visible data each frame (ntcharts' auto-range only
// grows); NaN breaks the line instead of being drawn as zero.
//
// The canvases are written out here, one SGR pair per run of same-styled
// cells (see line), not with canvas.View(), which renders every cell
// through its own lipgloss style.
//
// MEASUREMENTS: filled in below.
package chart
