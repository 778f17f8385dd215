package detail

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/common"
)

// pdView is the "disaggregated" section of a P/D model's row (its router,
// a pool or one of a pool's replicas): the P:D ratio of workers up, the
// mean TTFT split where it is spent beside the router's own, and each
// pool's saturation (KV use of its fullest worker, waiting, running). ""
// for any other endpoint. docs/disaggregated.md defines the parts.
func (m *Model) pdView(w int) string {
	pd := m.data.PD
	if pd == nil {
		return ""
	}
	r := &m.ctx.Styles.Normal
	head := m.heading("disaggregated") + r.Faint.S(fmt.Sprintf(" %s  P:D %d:%d workers up (prefill %d of %d, decode %d of %d)",
		pd.Model, pd.PrefillUp, pd.DecodeUp, pd.PrefillUp, pd.PrefillWorkers, pd.DecodeUp, pd.DecodeWorkers))
	lines := []string{common.Cut(head, w)}
	label := func(s string) string { return " " + r.Faint.S(common.Fit(s, 13, m.ctx.Glyphs.Ellipsis)) }
	if p, ok := pd.TTFTParts(); ok {
		text := fmt.Sprintf("prefill queue %s + prefill %s + KV transfer %s + first decode %s = %s",
			ms(p.PrefillQueue), ms(p.Prefill), ms(p.KVTransfer), ms(p.FirstDecode), ms(p.Sum))
		if p.Router != nil {
			text += "; router " + ms(*p.Router)
		}
		// Wrapped, not cut: the sum and the router's figure are the point.
		indent := strings.Repeat(" ", 14)
		for i, l := range strings.Split(ansi.Wrap(text, max(w-14, 20), " "), "\n") {
			if i == 0 {
				lines = append(lines, common.Cut(label("TTFT mean")+l, w))
			} else {
				lines = append(lines, common.Cut(indent+l, w))
			}
		}
	} else {
		lines = append(lines, common.Cut(label("TTFT mean")+r.Faint.S("no split: a pool's TTFT, queue or KV transfer figure is missing"), w))
	}
	for _, pool := range []struct {
		name string
		rows []telemetry.EndpointSnapshot
	}{{"prefill pool", pd.Prefill}, {"decode pool", pd.Decode}} {
		lines = append(lines, common.Cut(label(pool.name)+poolLoad(pool.rows), w))
	}
	return strings.Join(lines, "\n")
}

// poolLoad is a pool's saturation: the KV use of its fullest row, its
// waiting requests (those waiting for a KV transfer said apart) and its
// running ones, each "?" when unknown (never 0).
func poolLoad(rows []telemetry.EndpointSnapshot) string {
	// value is the rows' live values of sig: their largest and their sum.
	value := func(sig telemetry.Signal) (largest, sum float64, ok bool) {
		for _, es := range rows {
			s, has := es.Signals[sig]
			if !has || s.Value == nil || s.State != telemetry.Live {
				continue
			}
			if !ok || *s.Value > largest {
				largest = *s.Value
			}
			sum, ok = sum+*s.Value, true
		}
		return largest, sum, ok
	}
	show := func(v float64, ok bool, unit string) string {
		if !ok {
			return "?"
		}
		return figures.Number(v) + unit
	}
	kv, _, kvOK := value(telemetry.KVCache)
	_, wait, waitOK := value(telemetry.Waiting)
	text := "KV " + show(kv, kvOK, "%") + " · waiting " + show(wait, waitOK, "")
	if _, d, ok := value(telemetry.WaitingDeferred); ok && d > 0 {
		text += " (" + figures.Number(d) + " for their KV)"
	}
	_, run, runOK := value(telemetry.Running)
	return text + " · running " + show(run, runOK, "")
}

// ms writes a mean in milliseconds.
func ms(v float64) string { return figures.Number(v) + " ms" }
