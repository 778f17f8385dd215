package detail

import (
	"strings"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/common"
)

// MaxWaterfall is how many recent successful probes the waterfall draws.
const MaxWaterfall = 5

// segment is one stretch of a probe's timeline, from before its start
// (connection set-up) to its last token.
type segment struct {
	key    string // legend word
	ms     float64
	glyph  string // distinct without colour
	paint  func(r *themes.Roles) themes.Paint
	source string // client, server: <engine field>, derived
}

// Breakdown part names (sources/probe) the waterfall draws; the view
// reads them from the records, it does not import the source.
const (
	partDNS, partConnect, partTLS = "dns", "connect", "tls"
	partHeaders                   = "headers"
	partQueue, partLoad           = "queue", "load"
	partPrefill                   = "prefill"
	partOutsideTTFT               = "outside_to_first_token"
)

// segmentsOf splits a probe's time along its timeline: set-up (before the
// request starts, outside TTFT), then TTFT — into the engine's queue,
// load and prefill and what is outside the engine when the engine said
// (vLLM, Ollama, llama.cpp), else into time to headers and headers to
// first token as the client saw them —, then the stream after the first
// token (E2E − TTFT). Nil for a failed probe.
func segmentsOf(p *telemetry.ProbeAt, g themes.Glyphs) []segment {
	if !p.OK || p.E2Ems <= 0 {
		return nil
	}
	parts := map[string]telemetry.ProbePart{}
	for _, bp := range p.Breakdown {
		parts[bp.Part] = bp
	}
	glyph := func(uni, ascii string) string {
		if g.ASCII {
			return ascii
		}
		return uni
	}
	faint := func(r *themes.Roles) themes.Paint { return r.Faint }
	var out []segment
	setup := parts[partDNS].MS + parts[partConnect].MS + parts[partTLS].MS
	if setup > 0 {
		out = append(out, segment{"set-up", setup, glyph("·", "."), faint, "client (DNS, connect, TLS; before start)"})
	}
	if _, ok := parts[partPrefill]; ok {
		for _, s := range []struct {
			part, key, uni, ascii string
			paint                 func(r *themes.Roles) themes.Paint
		}{
			{partQueue, "queue", "▒", "q", func(r *themes.Roles) themes.Paint { return r.Warn }},
			{partLoad, "load", "▚", "l", func(r *themes.Roles) themes.Paint { return r.Warn }},
			{partPrefill, "prefill", "▓", "p", func(r *themes.Roles) themes.Paint { return r.Accent }},
		} {
			if bp, ok := parts[s.part]; ok && bp.MS > 0 {
				out = append(out, segment{s.key, bp.MS, glyph(s.uni, s.ascii), s.paint, bp.Source})
			}
		}
		if o := parts[partOutsideTTFT]; o.MS > 0 {
			out = append(out, segment{"outside engine", o.MS, glyph("░", "o"), faint, o.Source})
		}
	} else {
		h := parts[partHeaders].MS
		if h > 0 && h <= p.TTFTms {
			out = append(out, segment{"to headers", h, glyph("░", "h"), faint, "client"})
		} else {
			h = 0
		}
		if rest := p.TTFTms - h; rest > 0 {
			out = append(out, segment{"to first token", rest, glyph("▓", "t"), func(r *themes.Roles) themes.Paint { return r.Accent }, "client"})
		}
	}
	if s := p.E2Ems - p.TTFTms; s > 0 {
		out = append(out, segment{"stream", s, glyph("█", "#"), func(r *themes.Roles) themes.Paint { return r.Line }, "client (E2E − TTFT)"})
	}
	return out
}

// cells turns segment durations into bar cells on a shared scale: each
// non-empty segment gets at least one cell, and rounding never makes a
// probe's bar longer than its share of width.
func cells(segs []segment, scale float64, width int) []int {
	out := make([]int, len(segs))
	if scale <= 0 || width <= 0 {
		return out
	}
	var total float64
	for _, s := range segs {
		total += s.ms
	}
	budget := max(int(total/scale*float64(width)+0.5), len(segs))
	used := 0
	var acc float64
	for i, s := range segs {
		acc += s.ms
		end := int(acc/total*float64(budget) + 0.5)
		n := max(end-used, 1)
		out[i] = n
		used += n
	}
	return out
}

// waterfall draws where the time of the last successful probes went, on
// one time scale, with a legend naming each part's source.
func (m *Model) waterfall(w int) string {
	ctx := m.ctx
	r := &ctx.Styles.Normal
	g := ctx.Glyphs
	type row struct {
		p    *telemetry.ProbeAt
		segs []segment
	}
	var rows []row
	scale := 0.0
	ps := m.data.Probes
	for i := len(ps) - 1; i >= 0 && len(rows) < MaxWaterfall; i-- {
		if segs := segmentsOf(&ps[i], g); segs != nil {
			rows = append(rows, row{&ps[i], segs})
			var t float64
			for _, s := range segs {
				t += s.ms
			}
			scale = max(scale, t)
		}
	}
	head := m.heading("where the time went") + r.Faint.S(" last successful probes, one time scale")
	if len(rows) == 0 {
		return head + "\n" + r.NoData.S(" no successful probe yet")
	}
	lines := []string{head}
	const label, total = 10, 8 // " hh:mm:ss " and the E2E figure
	barW := max(w-label-total-2, 8)
	seen := map[string]segment{}
	var order []string
	for _, rw := range rows {
		var b strings.Builder
		b.WriteString(" " + r.Faint.S(common.Clock(rw.p.At)) + " ")
		n := cells(rw.segs, scale, barW)
		drawn := 0
		for i, s := range rw.segs {
			s.paint(r).To(&b, strings.Repeat(s.glyph, n[i]))
			drawn += n[i]
			if _, ok := seen[s.key]; !ok {
				seen[s.key] = s
				order = append(order, s.key)
			}
		}
		b.WriteString(strings.Repeat(" ", max(barW-drawn, 0)))
		b.WriteString(" " + r.Text.S(figures.Millis(rw.p.E2Ems+setupOf(rw.segs))))
		lines = append(lines, common.Cut(b.String(), w))
	}
	for _, k := range order {
		s := seen[k]
		lines = append(lines, common.Cut(" "+s.paint(r).S(s.glyph)+" "+r.Text.S(s.key)+r.Faint.S(" "+s.source), w))
	}
	return strings.Join(lines, "\n")
}

func setupOf(segs []segment) float64 {
	if len(segs) > 0 && segs[0].key == "set-up" {
		return segs[0].ms
	}
	return 0
}
