package detail

import (
	"slices"
	"strings"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/chart"
	"github.com/ttftop/ttftop/tui/common"
)

// Model is the detail view of one endpoint; content taller than the
// screen scrolls (so nothing is lost at 80×24).
type Model struct {
	ctx   *common.Context
	name  string
	ep    telemetry.EndpointSnapshot
	hasEP bool
	// sources are every source's status: those feeding the endpoint say
	// what they are (a PromQL store's history backfilled and live since).
	sources []telemetry.SourceStatus
	badge   slo.Badge
	data    Data
	// Scroller gives Scroll, Page, Home and End.
	common.Scroller
	width  int
	height int
	dirty  bool // content must be re-rendered
	// The live pane repaints several times a second while a response
	// streams; a live update re-renders only that pane (liveDirty). On a
	// refresh each expensive section is drawn again only when the hash of
	// what it shows changed (theme: gen; size and window: in the keys).
	liveDirty bool
	gen       int
	charts    common.Memo
	panels    common.Memo
	probesTxt common.Memo
	head      string   // title, summary, charts, panels
	headLines []string // head, cut to the width
	// engineLines: the engine section, cut to the width; after the
	// probes and live tokens on a probed endpoint (its definitions are
	// long: the client's panels stay on the first screen).
	engineLines []string
}

// New returns a closed detail view.
func New(ctx *common.Context) Model { return Model{ctx: ctx} }

// Open shows endpoint name, scrolled to the top.
func (m *Model) Open(name string) {
	if name != m.name {
		m.data = Data{}
		m.hasEP = false
	}
	m.name, m.dirty = name, true
	m.Scroller.Home()
}

// Name is the endpoint shown.
func (m *Model) Name() string { return m.name }

// SetEndpoint updates the snapshot figures and SLO badge.
func (m *Model) SetEndpoint(ep telemetry.EndpointSnapshot, ok bool, badge slo.Badge) {
	m.ep, m.hasEP, m.badge, m.dirty = ep, ok, badge, true
}

// SetSources gives the sources' statuses (their descriptions say what
// is backfilled history and what is live).
func (m *Model) SetSources(srcs []telemetry.SourceStatus) {
	if !slices.EqualFunc(srcs, m.sources, sameDescription) {
		m.sources, m.dirty = slices.Clone(srcs), true
	}
}

func sameDescription(a, b telemetry.SourceStatus) bool {
	return a.Kind == b.Kind && a.URL == b.URL && a.Name == b.Name && a.Description == b.Description
}

// SetData updates the series, probes and live text (ignored if they are
// for another endpoint: a late result after the user moved on).
func (m *Model) SetData(d Data) {
	if d.Endpoint != m.name {
		return
	}
	m.data, m.dirty = d, true
}

// SetLive updates only the streaming text; it reports whether it changed.
func (m *Model) SetLive(ep string, l telemetry.LiveText, at time.Time) bool {
	if ep != m.name || (l == m.data.Live && at.Equal(m.data.LiveAt)) {
		return false
	}
	m.data.Live, m.data.LiveAt, m.liveDirty = l, at, true
	return true
}

// SetSize sets the view box.
func (m *Model) SetSize(w, h int) {
	if w != m.width || h != m.height {
		m.width, m.height, m.dirty = max(w, 0), max(h, 0), true
		m.headLines = nil
	}
}

// Invalidate forces a rebuild (theme change).
func (m *Model) Invalidate() { m.gen, m.dirty = m.gen+1, true }

// ChartPoints is how many points each big chart wants at this width.
func (m *Model) ChartPoints() int { return chart.Points(m.chartWidth(), m.ctx.Glyphs.ASCII) }

// View renders exactly height lines.
func (m *Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	if m.dirty || m.liveDirty {
		m.Scroller.SetLines(m.render())
		m.dirty, m.liveDirty = false, false
	}
	m.Scroller.SetHeight(m.height)
	return m.Scroller.View(m.width, m.ctx.Styles.Normal.Faint)
}

// render returns the content lines, each cut to the width. Title and
// summary are cheap and always drawn; charts, panels and probes come from
// their memos; the head is split again only when its text changed.
func (m *Model) render() []string {
	w := m.width
	pw, lw := m.bottomWidths()
	if m.dirty {
		parts := []string{m.title(w), m.summary(w)}
		if from := m.fedBy(w); from != "" {
			parts = append(parts, from)
		}
		parts = append(parts, m.objectives(w))
		if why := m.whyView(w); why != "" {
			parts = append(parts, why)
		}
		if pd := m.pdView(w); pd != "" {
			parts = append(parts, pd)
		}
		if lora := m.adaptersView(w); lora != "" {
			parts = append(parts, lora)
		}
		parts = append(parts, "", m.chartsView(w), "", m.panelsView(w), "")
		head := strings.Join(parts, "\n")
		if head != m.head || m.headLines == nil {
			m.head, m.headLines = head, common.Lines(head, w)
		}
		m.engineLines = nil
		if e := m.engineView(w); e != "" {
			m.engineLines = append(common.Lines(e, w), "")
		}
	}
	if !m.probed() {
		note := " no probe on this endpoint: its figures are the engine's own (server); tokens/event, last probes and live tokens need one"
		return slices.Concat(m.headLines, m.engineLines, noteLines(m.ctx.Styles.Normal.Faint, note, w))
	}
	bottom := common.Lines(m.bottom(m.probesView(pw), m.live(lw), pw, lw), w)
	return slices.Concat(m.headLines, bottom, []string{""}, m.engineLines)
}

// key starts a section's hash with what every section depends on: the
// theme (gen, name), glyphs and the view's size.
func (m *Model) key() common.Hash {
	h := common.NewHash()
	h.Int(m.gen)
	h.Str(m.ctx.Styles.Theme.Name)
	h.Bool(m.ctx.Glyphs.ASCII)
	h.Int(m.width)
	h.Int(m.height)
	return h
}
