// Package help is the `?` screen: key bindings generated from the key map
// (bubbles/help), what every state word means, and the definition of
// every metric shown, so each figure names how it was computed.
package help

import (
	"strings"

	bhelp "charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
	"github.com/ttftop/ttftop/tui/gpus"
	"github.com/ttftop/ttftop/tui/keys"
)

// Model is the help screen.
type Model struct {
	ctx  *common.Context
	keys keys.Map
	// Scroller gives Scroll, Page, Home and End.
	common.Scroller
	width  int
	height int
	dirty  bool
}

// New returns the help screen for km.
func New(ctx *common.Context, km keys.Map) Model {
	return Model{ctx: ctx, keys: km, dirty: true}
}

// SetSize sets the box.
func (m *Model) SetSize(w, h int) {
	if w != m.width {
		m.dirty = true
	}
	m.width, m.height = max(w, 0), max(h, 0)
}

// Invalidate forces a re-render (theme change).
func (m *Model) Invalidate() { m.dirty = true }

// View renders exactly height lines.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.dirty {
		m.Scroller.SetLines(common.Lines(m.render(), m.width))
		m.dirty = false
	}
	m.Scroller.SetHeight(m.height)
	return m.Scroller.View(m.width, m.ctx.Styles.Normal.Faint)
}

// Bubbles returns a bubbles/help model styled with the theme, for the
// footer and this screen.
func Bubbles(ctx *common.Context) bhelp.Model {
	h := bhelp.New()
	lip := ctx.Styles.Lip
	h.Styles = bhelp.Styles{Ellipsis: lip.Faint, ShortKey: lip.Key, ShortDesc: lip.Desc, ShortSeparator: lip.Faint,
		FullKey: lip.Key, FullDesc: lip.Desc, FullSeparator: lip.Faint}
	if ctx.Glyphs.ASCII {
		h.ShortSeparator, h.Ellipsis = " | ", "..."
	}
	return h
}

func (m *Model) render() string {
	st := m.ctx.Styles
	r := &st.Normal
	w := m.width
	var out []string
	out = append(out, m.heading(" keys")...)
	out = append(out, m.keyColumns(w)...)
	out = append(append(out, ""), m.heading(" states (always in words, never colour alone)")...)
	for _, s := range [][2]string{
		{"OK", "SLO met over the window"},
		{"PENDING", "objective breached, waiting out its `for` duration"},
		{"BREACH", "objective breached long enough: the alert fires"},
		{"STALE 14s", "no fresh value for 14s: figures are dimmed, with their age"},
		{"NO DATA", "the source answered with nothing (never shown as 0)"},
		{"n/d", "no data, in a cell too narrow for the words (KV%, MBU)"},
		{"ERROR", "probe, scrape or query failed: reason in the status line"},
		{"DOWN", "the replica's scrape target is down (the store's up, or the scrape): since when and why in the status line and on e"},
		{"GONE", "the store no longer knows the target: still listed for the window, then it leaves"},
		{"×2 " + m.ctx.Glyphs.Down + "1", "a model row of 2 replicas, 1 of them down or gone"},
		{"dp×2", "a server's row over its 2 data-parallel ranks (summed; KV% the fullest rank's); x lists each rank"},
		{m.ctx.Glyphs.Unknown, "never observed, or no objective applies"},
		{"~", "estimate (MBU from weights and KV, histogram interpolation, token counts from events)"},
		{format.YoungMark, "tok/s, req/s… over a series younger than its rate window: reads low (ratios never do)"},
		{format.RestartedMark, "after a name: the engine restarted a short while ago (its counters went back, or it came back after a stop); its rates started afresh, + until their window fills"},
		{"≤300ms", "a quantile in a histogram's lowest bucket: at most that edge, not a measurement (≥: in the +Inf bucket, at least); the mean is beside it"},
	} {
		out = append(out, m.term(s[0], s[1], 11)...)
	}
	out = append(append(out, ""), m.heading(" terms")...)
	for _, s := range [][2]string{
		{"TTFT p50/" + m.ctx.Glyphs.Down + "p99", "the column sorted on (s; S reverses): TTFT and TPOT sort by p99, the tail, the figure the arrow marks; unknown figures always sort last"},
		{"SRC probe", "the row's latency figures are the client's: ttftop's own requests, network included"},
		{"SRC server", "the engine's own figures (scraped /metrics or PromQL); v switches a probed row to them"},
		{"availability", "objective on every probed endpoint: more than half the probes of the last minute failed → FIRING"},
		{"burn 20×/30× > 14.4× over 1h/5m", "error budget spent 20 times (long window, 1h) and 30 times (short window, 5m) as fast as the SLO allows; the pair fires when both exceed its factor (14.4×); \"vs\" instead of \">\": one of them does not"},
		{"budget 62% left / spent", "share of the error budget left over the objective's period; spent: none left"},
		{"host:port · 6 endpoints", "a server's line: the rows under it, indented, are its models (its host:port said once); elided names keep the words that tell them apart (70B, FP8), an ellipsis stands for the rest; the status line under the table and the detail view give the full name"},
		{"ttft ▁▃█", "a compact row's sparkline: mean per time bin over the window, from the lowest to the highest value shown (at least a tenth of them apart, so jitter stays small; the SLO threshold is the top or bottom when it lies within the values' own span); a steady series is flat at mid height; cells over the SLO are highlighted"},
		{"50ms │⠒⠒⠤", "a row's chart strip: TTFT left, TPOT right, mean per time bin over the window, scale top on the left; a dashed line is the SLO threshold; gaps are missing data, never zero"},
		{"held by keep-firing-for", "a firing alert whose value is back within the objective: it stays firing for --slo-keep-firing-for, so a flapping value does not page twice"},
		{"page / ticket", "an alert's severity: page wakes someone, ticket can wait"},
		{"ok 42ms", "in the sources line: the source answered, and how long its last request took"},
		{"unknown since", "the data behind an alert is missing, with why: no data yet, data stale or source failing; a pending or firing alert keeps its state, never resolves on missing data"},
		{"REC file", "this session is being recorded (--record)"},
		{"WHY kv_cache+1", "the row's diagnosis: its leading cause in a word (+1: one more cause named); blank when healthy or not yet diagnosed; a column of wide terminals"},
		{"why: prefill: …", "after an open alert and under the table: the leading cause in a few words and since when; enter's why section gives the latency's terms (network, queue, prefill, decode step against its bandwidth floor), each cause's evidence against its baselines and the next step; e lists the same for every unwell endpoint (docs/diagnosis.md)"},
		{"unclear", "an unwell endpoint whose figures allow no call: the why section says which figures are missing"},
	} {
		out = append(out, m.term(s[0], s[1], 29)...)
	}
	out = append(append(out, ""), m.heading(" metrics")...)
	labels := make([]string, len(telemetry.Signals))
	for i, sig := range telemetry.Signals {
		info := sig.Info()
		labels[i] = info.Title
		if info.Unit != "" {
			labels[i] += " (" + info.Unit + ")"
		}
	}
	lw := m.labelWidth(labels)
	for i, sig := range telemetry.Signals {
		if sig == telemetry.EngineSignals[0] {
			out = append(append(out, ""), m.heading(" engine diagnosis (server figures: scrape, PromQL; the detail view's engine section)")...)
		}
		out = append(out, m.term(labels[i], sig.Info().Definition, lw)...)
	}
	out = append(append(out, ""), m.heading(" GPU panel (u shows or hides it)")...)
	terms := gpus.Terms()
	labels = labels[:0]
	for _, s := range terms {
		labels = append(labels, s[0])
	}
	lw = m.labelWidth(labels)
	for _, s := range terms {
		out = append(out, m.term(s[0], s[1], lw)...)
	}
	out = append(out, "")
	for _, l := range strings.Split(ansi.Wrap("sparklines and charts: mean per time bin; p50/p99 over the window shown in the header", max(m.width-2, 20), " "), "\n") {
		out = append(out, r.Faint.S(" "+strings.TrimRight(l, " "))) // wrapped, not cut mid-word at 80 columns
	}
	return strings.Join(out, "\n")
}

// minLabelWidth is the narrowest label column of the metrics sections.
const minLabelWidth = 15

// labelWidth is a section's label column: its widest label, so no name
// wraps ("requests" / "(req/s)"), up to a third of the width, where the
// definitions keep the rest; a longer label wraps.
func (m *Model) labelWidth(labels []string) int {
	w := minLabelWidth
	for _, l := range labels {
		w = max(w, common.Width(l))
	}
	return min(w, max(minLabelWidth, m.width/3))
}

// term lays out one entry: the label in a column lw wide, its definition
// beside it; both wrap (a label longer than its column onto its own
// lines) so nothing is cut at any width.
// heading is a section title, wrapped to the width (never cut).
func (m *Model) heading(title string) []string {
	lines := strings.Split(ansi.Wrap(title, max(m.width-1, 20), " "), "\n")
	for i, l := range lines {
		if i > 0 {
			l = " " + l
		}
		lines[i] = m.ctx.Styles.Title.S(l)
	}
	return lines
}

func (m *Model) term(label, def string, lw int) []string {
	r := &m.ctx.Styles.Normal
	dw := max(m.width-lw-3, 20)
	labels := strings.Split(ansi.Wrap(label, lw, " "), "\n")
	defs := strings.Split(ansi.Wrap(def, dw, " "), "\n")
	out := make([]string, max(len(labels), len(defs)))
	for i := range out {
		l, d := "", ""
		if i < len(labels) {
			l = strings.TrimRight(labels[i], " ")
		}
		if i < len(defs) {
			d = defs[i]
		}
		out[i] = " " + r.Accent.S(common.PadTo(l, lw)) + " " + r.Text.S(d)
	}
	return out
}

// keyColumns renders the key groups with bubbles/help: side by side when
// they fit, else one group under another.
func (m *Model) keyColumns(w int) []string {
	h := Bubbles(m.ctx)
	full := h.FullHelpView(m.keys.FullHelp())
	if lipgloss.Width(full)+1 <= w {
		return indent(full)
	}
	// Too narrow for the groups side by side: one list, every key in one
	// column as wide as the widest, so the descriptions line up.
	var shown []key.Binding
	keyW := 0
	for _, g := range m.keys.FullHelp() {
		for _, b := range g {
			if b.Enabled() { // not the replay keys outside a replay
				shown = append(shown, b)
				keyW = max(keyW, common.Width(b.Help().Key))
			}
		}
	}
	lip := m.ctx.Styles.Lip
	out := make([]string, 0, len(shown))
	for _, b := range shown {
		out = append(out, " "+lip.Key.Render(common.Fit(b.Help().Key, keyW, ""))+" "+lip.Desc.Render(b.Help().Desc))
	}
	return out
}

func indent(s string) []string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = " " + l
	}
	return ls
}
