package table

import (
	"strings"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/format"
)

// Info is the status line under the table for the selected endpoint: the
// first failing or stale signal with its reason and last good value, else
// where the endpoint lives. A table cell only has room to say "ERROR";
// this line says why.
func (m *Model) Info() string {
	r, ok := m.Selected()
	if !ok || m.width <= 0 {
		return ""
	}
	ctx := m.ctx
	st := &ctx.Styles.Normal
	name := common.Safe(r.Name())
	dot := ctx.Glyphs.Dot
	if h, ok := r.Endpoint.Target(); ok {
		// Why its figures stopped, as the store says it: first.
		line := name + ": " + strings.ToUpper(h.State) + " since " + common.Clock(h.Since.In(ctx.Now.Location())) + " (" + figures.Age(ctx.Now.Sub(h.Since)) + ")" +
			" " + dot + " " + common.Safe(h.Reason)
		p := st.Bad
		if h.State == telemetry.TargetGone {
			p = st.Stale
		}
		return p.S(common.Fit(" "+line, m.width, ctx.Glyphs.Ellipsis))
	}
	if down, of, ok := r.Endpoint.ReplicasDown(); ok && down > 0 {
		line := name + ": " + figures.Number(float64(down)) + " of " + figures.Number(float64(of)) + " replicas down " + dot + " x lists them"
		return st.Bad.S(common.Fit(" "+line, m.width, ctx.Glyphs.Ellipsis))
	}
	if c := r.Cause; c != nil {
		// Why the row is unwell, in the diagnosis's words, and where the
		// evidence is: before a figure's error, which is one of its symptoms.
		line := name + ": why: " + common.Safe(c.Summary)
		if !c.Since.IsZero() {
			line += " since " + common.Clock(c.Since.In(ctx.Now.Location())) + " (" + figures.Age(ctx.Now.Sub(c.Since)) + ")"
		}
		line += " " + dot + " enter: evidence, next step"
		p := st.Bad
		if c.Cause == diagnosis.Unclear {
			p = st.Warn
		}
		return p.S(common.Fit(" "+line, m.width, ctx.Glyphs.Ellipsis))
	}
	for _, sig := range telemetry.Signals {
		s, ok := r.Sig(sig)
		if !ok || (s.State != telemetry.Error && s.State != telemetry.Stale) {
			continue
		}
		title := sig.Info().Title
		var b strings.Builder
		b.WriteString(name + ": " + title + " ")
		if s.State == telemetry.Error {
			b.WriteString("ERROR")
			if s.Err != "" {
				b.WriteString(": " + common.Safe(s.Err))
			}
		} else {
			b.WriteString("STALE: no update for " + figures.Age(s.Age(ctx.Now)))
		}
		if last := lastGood(s); last != "" {
			b.WriteString(" " + dot + " last " + last + " " + figures.Age(s.Age(ctx.Now)) + " ago")
		}
		if s.Source != "" {
			b.WriteString(" " + dot + " " + common.Safe(s.Source))
		}
		p := st.Stale
		if s.State == telemetry.Error {
			p = st.Bad
		}
		return p.S(common.Fit(" "+b.String(), m.width, ctx.Glyphs.Ellipsis))
	}
	parts := []string{name}
	if m := r.Endpoint.Model; m != "" && !strings.HasSuffix(r.Name(), m) { // the name says it already
		parts = append(parts, common.Safe(m))
	}
	if r.Endpoint.BaseURL != "" {
		parts = append(parts, common.Safe(r.Endpoint.BaseURL))
	}
	parts = append(parts, "enter for details")
	switch {
	case !r.Probed(): // server figures only (PromQL, scrape): v has nothing to switch to
	case r.Server:
		parts = append(parts, "v: client figures")
	default:
		parts = append(parts, "v: server figures")
	}
	return st.Faint.S(common.Fit(" "+strings.Join(parts, " "+dot+" "), m.width, ctx.Glyphs.Ellipsis))
}

func lastGood(s telemetry.SignalSnapshot) string {
	if t := format.Pair(s); t != "" {
		return t
	}
	return format.Scalar(s)
}
