package themes

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Paint is a style reduced to the escape sequences before and after a
// text. Tables of 200 rows are painted cell by cell every frame; taking
// the SGR prefix/suffix once avoids running lipgloss's layout machinery
// (width, wrapping, padding) per cell, and keeps one SGR per run of text
// rather than one per character (ntcharts writes an SGR and a reset per
// cell, which makes a frame many times larger).
type Paint struct{ pre, post string }

func paintOf(st lipgloss.Style) Paint {
	r := st.Render("X")
	i := strings.IndexByte(r, 'X')
	if i < 0 {
		return Paint{}
	}
	return Paint{pre: r[:i], post: r[i+1:]}
}

// S paints s. Text is never interpreted: it is wrapped, not parsed.
func (p Paint) S(s string) string {
	if p.pre == "" || s == "" {
		return s
	}
	return p.pre + s + p.post
}

// To writes s painted into b without building an intermediate string.
func (p Paint) To(b *strings.Builder, s string) {
	if p.pre == "" || s == "" {
		b.WriteString(s)
		return
	}
	b.WriteString(p.pre)
	b.WriteString(s)
	b.WriteString(p.post)
}

// Roles are the semantic paints for text on one background.
type Roles struct {
	Text, Faint, Accent Paint
	OK, Warn, Bad       Paint
	Stale, NoData       Paint
	Line, Line2, Thresh Paint
	Header              Paint
}

// Styles are a theme's paints, built once per theme change.
type Styles struct {
	Theme Theme
	// Normal is for ordinary rows; Selected for the selected row (the
	// same roles over the selection background, or reversed).
	Normal, Selected Roles
	Title, Border    Paint
	Frozen           Paint
	Key, Desc        Paint
	// Breach shades chart columns where the SLO threshold was exceeded
	// (a text strip under the chart says the same without colour);
	// Shaded are the roles drawn over that shading.
	Breach Paint
	Shaded Roles
	// Lip are lipgloss styles for bubbles components (help) that take
	// styles rather than paints.
	Lip struct{ Key, Desc, Faint lipgloss.Style }
}

func fg(st lipgloss.Style, c uint8, p palette) lipgloss.Style {
	if p.Mono || c == 0 {
		return st
	}
	return st.Foreground(lipgloss.ANSIColor(c))
}

func roles(p palette, base lipgloss.Style) Roles {
	bad := fg(base, p.Bad, p).Bold(true)
	warn := fg(base, p.Warn, p).Bold(p.Bold)
	if p.Mono {
		warn = warn.Underline(true)
	}
	return Roles{
		Text:   paintOf(fg(base, p.Text, p)),
		Faint:  paintOf(fg(base, p.Faint, p).Faint(p.Mono)),
		Accent: paintOf(fg(base, p.Accent, p).Bold(p.Mono)),
		OK:     paintOf(fg(base, p.OK, p).Bold(p.Bold && !p.Mono)),
		Warn:   paintOf(warn),
		Bad:    paintOf(bad),
		// Stale is dim in every theme: a stale number must never look
		// like a live one.
		Stale:  paintOf(fg(base, p.Stale, p).Faint(true)),
		NoData: paintOf(fg(base, p.NoData, p).Italic(true)),
		Line:   paintOf(fg(base, p.Line, p)),
		Line2:  paintOf(fg(base, p.Line2, p)),
		Thresh: paintOf(fg(base, p.Threshold, p)),
		Header: paintOf(fg(base, p.Title, p).Bold(true)),
	}
}

// NewStyles builds the paints of t.
func NewStyles(t Theme) *Styles {
	p := t.p
	base := lipgloss.NewStyle()
	sel := base
	switch {
	case p.SelectedReverse || p.Mono:
		sel = sel.Reverse(true)
	default:
		sel = sel.Background(lipgloss.ANSIColor(p.SelectedBg))
		if p.SelectedFg != 0 {
			sel = sel.Foreground(lipgloss.ANSIColor(p.SelectedFg))
		}
	}
	s := &Styles{
		Theme:    t,
		Normal:   roles(p, base),
		Selected: roles(p, sel),
		Title:    paintOf(fg(base, p.Title, p).Bold(true)),
		Border:   paintOf(fg(base, p.Border, p).Faint(p.Mono)),
		Frozen:   paintOf(fg(base, p.Warn, p).Bold(true).Reverse(true)),
		Key:      paintOf(fg(base, p.Accent, p).Bold(true)),
		Desc:     paintOf(fg(base, p.Text, p)),
	}
	if p.SelectedFg != 0 && !p.Mono && !p.SelectedReverse {
		// keep the selection's own foreground for plain text
		s.Selected.Text = paintOf(sel)
	}
	s.Lip.Key = fg(base, p.Accent, p).Bold(true)
	s.Lip.Desc = fg(base, p.Text, p)
	s.Lip.Faint = fg(base, p.Faint, p).Faint(p.Mono)
	s.Shaded = s.Normal
	if !p.Mono && p.BreachBg != 0 {
		shade := base.Background(lipgloss.ANSIColor(p.BreachBg))
		s.Breach = paintOf(shade)
		s.Shaded = roles(p, shade)
	}
	return s
}

// Row returns the roles for a row, selected or not.
func (s *Styles) Row(selected bool) *Roles {
	if selected {
		return &s.Selected
	}
	return &s.Normal
}
