// Package why draws an endpoint's diagnosis in words: its latency split
// into physical terms, then each named cause with its evidence against
// the baselines, since when, and the next step. The detail view's "why"
// section and the `e` screen share it, so both read alike.
package why

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/tui/common"
)

// Lines is d in lines of at most w cells, each indented by indent.
func Lines(ctx *common.Context, d diagnosis.Diagnosis, indent string, w int) []string {
	r := &ctx.Styles.Normal
	dot := " " + ctx.Glyphs.Dot + " "
	var out []string
	para := func(paint func(string) string, lead, s string) {
		for i, l := range strings.Split(ansi.Wordwrap(s, max(w-len(indent)-len(lead), 10), " /;"), "\n") {
			if i > 0 {
				lead = strings.Repeat(" ", len(lead))
			}
			out = append(out, indent+r.Faint.S(lead)+paint(l))
		}
	}
	if dec := Decomposition(d.Decomposition, dot); dec != "" {
		para(r.Text.S, "latency ", dec)
	}
	for _, f := range d.Causes {
		paint := r.Bad.S
		if f.Cause == diagnosis.Unclear {
			paint = r.Warn.S
		}
		// The summary without the cause word the line starts with.
		head := common.Safe(strings.TrimPrefix(f.Summary, string(f.Cause)+": "))
		if !f.Since.IsZero() {
			head += dot + "since " + common.Clock(f.Since.In(ctx.Now.Location())) + " (" + figures.Age(ctx.Now.Sub(f.Since)) + ")"
		}
		out = append(out, common.Cut(indent+paint(string(f.Cause))+" "+r.Text.S(head), w))
		if ev := f.EvidenceWords(); ev != "" {
			para(r.Text.S, "  evidence ", common.Safe(ev))
		}
		if len(f.Missing) > 0 {
			para(r.Text.S, "  missing ", common.Safe(strings.Join(f.Missing, "; ")))
		}
		if f.Next != "" {
			para(r.Accent.S, "  next ", common.Safe(f.Next))
		}
	}
	return out
}

// Decomposition is the latency's terms in one line: "TTFT client 812ms =
// network 12ms + server 800ms (queue 700ms, prefill 90ms) · step 21ms vs
// floor 14ms (MBU 66% measured) · running 32". Unknown terms are left out.
func Decomposition(dc diagnosis.Decomposition, dot string) string {
	ms := func(p *float64) string { return figures.Millis(*p) }
	var parts []string
	var ttft []string
	if dc.ClientTTFTMs != nil {
		ttft = append(ttft, "client "+ms(dc.ClientTTFTMs))
	}
	if dc.NetworkMs != nil {
		ttft = append(ttft, "= network "+ms(dc.NetworkMs)+" +")
	}
	if dc.ServerTTFTMs != nil {
		s := "server " + ms(dc.ServerTTFTMs)
		if dc.ServerStat != "" {
			s += " " + dc.ServerStat
		}
		ttft = append(ttft, s)
	}
	var in []string
	if dc.QueueMs != nil {
		in = append(in, "queue "+ms(dc.QueueMs))
	}
	if dc.PrefillMs != nil {
		in = append(in, "prefill "+ms(dc.PrefillMs))
	}
	if len(in) > 0 {
		ttft = append(ttft, "("+strings.Join(in, ", ")+")")
	}
	if len(ttft) > 0 {
		parts = append(parts, "TTFT "+strings.Join(ttft, " "))
	}
	if dc.TPOTMs != nil {
		s := "step " + ms(dc.TPOTMs)
		if dc.TPOTFloorMs != nil {
			s += " vs floor " + ms(dc.TPOTFloorMs)
			if dc.MBUPct != nil {
				s += " (MBU " + figures.Percent(*dc.MBUPct) + " " + dc.FloorFrom + ")"
			}
		}
		parts = append(parts, s)
	}
	if dc.Running != nil {
		parts = append(parts, "running "+figures.Number(*dc.Running))
	}
	return strings.Join(parts, dot)
}
