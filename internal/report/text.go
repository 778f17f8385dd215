// Package report renders snapshots as plain text or JSON, for headless use:
// the dashboard when stdout is not a terminal, and `ttftop snapshot`.
package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Text writes an aligned table: one row per endpoint, each figure with its
// state when it is not live, so a stale or failed number never reads as a
// healthy one.
func Text(w io.Writer, snap telemetry.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	windows := rateWindows(snap)
	head := snap.At.Format(time.RFC3339) + "  window " + slo.FormatDuration(snap.Window)
	if len(windows) == 1 {
		head += "; rates and ratios " + windows[0]
		if errOverWindow(snap) {
			head += ", ERR over the window" // a direct scrape's: failed/all of the window's increments
		}
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintln(tw, "ENDPOINT\tENGINE\tTTFT p50/p99\tTPOT p50/p99\tTOK/S\tRUN/WAIT\tKV\tDRAM\tMBU\tERR")
	endpoints := listed(snap.Endpoints)
	for _, ep := range endpoints {
		s := ep.Signals
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\n",
			ep.Name, ep.Engine,
			Pair(s[telemetry.TTFT], snap.At), Pair(s[telemetry.TPOT], snap.At),
			Value(s[telemetry.OutputTPS], snap.At),
			Value(s[telemetry.Running], snap.At), Value(s[telemetry.Waiting], snap.At),
			Value(s[telemetry.KVCache], snap.At), Value(s[telemetry.GPUMemBW], snap.At),
			Value(s[telemetry.MBU], snap.At), Value(s[telemetry.ErrorRate], snap.At))
	}
	// Under the table (a line without cells would split its columns).
	for _, ep := range endpoints {
		if line := targetLine(ep.Endpoint, snap.At); line != "" {
			fmt.Fprintln(tw, ep.Name+" "+line)
		}
		if line := engineLine(ep.Signals, snap.At); line != "" {
			fmt.Fprintln(tw, ep.Name+" "+line)
		}
		if line := gpuFigures(ep.Signals, snap.At); line != "" {
			fmt.Fprintln(tw, ep.Name+" "+line)
		}
		if len(windows) > 1 {
			if line := rateLine(ep.Signals); line != "" {
				fmt.Fprintln(tw, ep.Name+" "+line)
			}
		}
		if line := youngLine(ep.Signals); line != "" {
			fmt.Fprintln(tw, ep.Name+" "+line)
		}
		if at, how, ok := ep.Restarted(); ok {
			fmt.Fprintln(tw, ep.Name+" RESTARTED "+Age(snap.At.Sub(at))+" ago ("+how+"): rates started afresh")
		}
	}
	for _, src := range snap.Sources {
		where := src.URL
		if where == "" {
			where = src.Name // a notifier: "webhook http://…"
		}
		line := fmt.Sprintf("source %s %s: %s", src.Kind, where, src.State)
		if src.Err != "" {
			line += " — " + src.Err
		}
		if src.State == telemetry.NoData && src.Description != "" {
			line += " — " + src.Description // "no engine metrics at …": why there is nothing
		}
		if len(src.Warnings) > 0 { // "data delayed: lagging 30s behind", "TLS NOT VERIFIED"
			line += " (" + strings.Join(src.Warnings, "; ") + ")"
		}
		fmt.Fprintln(tw, line)
	}
	for _, g := range snap.GPUs {
		fmt.Fprintln(tw, gpuLine(g))
	}
	return tw.Flush()
}

// listed is the endpoints a text table lists: all of them, except the
// only replica of a model, whose model row says the same (as the
// dashboard shows it).
func listed(eps []telemetry.EndpointSnapshot) []telemetry.EndpointSnapshot {
	replicas := map[string]int{}
	aggregates := map[string]bool{}
	for _, ep := range eps {
		if ep.Aggregate {
			aggregates[ep.Name] = true
		}
		if ep.Group != "" {
			replicas[ep.Group]++
		}
	}
	out := make([]telemetry.EndpointSnapshot, 0, len(eps))
	for _, ep := range eps {
		if ep.Group != "" && aggregates[ep.Group] && replicas[ep.Group] == 1 {
			continue
		}
		out = append(out, ep)
	}
	return out
}

// gpuFigures is an endpoint's GPU power and energy per token, with their
// sharing ("" when it has neither): "gpu: power 262W · energy 0.65J/tok
// (host's GPUs, shared by 2 endpoints: …)"; energy per token is labelled
// "energy", its unit saying per token.
func gpuFigures(s map[telemetry.Signal]telemetry.SignalSnapshot, now time.Time) string {
	var parts []string
	var shared *telemetry.GPUShare
	for _, f := range []struct {
		sig   telemetry.Signal
		label string
	}{{telemetry.GPUPower, "power"}, {telemetry.EnergyPerToken, "energy"}} {
		v, ok := s[f.sig]
		if !ok {
			continue
		}
		parts = append(parts, f.label+" "+Value(v, now))
		if shared == nil {
			shared = v.Shared
		}
	}
	if len(parts) == 0 {
		return ""
	}
	line := "gpu: " + strings.Join(parts, " · ")
	if shared != nil {
		what := map[string]string{"host": "host's GPUs", "gpus": "GPUs", "group": "group's GPUs"}[shared.Scope]
		if what == "" {
			what = "GPUs"
		}
		line += fmt.Sprintf(" (%s, shared by %d endpoints: their power, their energy ÷ all their tokens", what, shared.By)
		if shared.Partial {
			line += "; estimate: partly shared"
		}
		line += ")"
	}
	return line
}

// gpuLine is one GPU of the snapshot: where it is, what it is, the
// figures its source has ("—" for the others) and its endpoints.
func gpuLine(g telemetry.GPUDevice) string {
	num := func(p *float64, scale float64, unit string) string {
		if p == nil {
			return "—"
		}
		return Number(*p*scale) + unit
	}
	dram := num(g.DRAMActiveRatio, 100, "%")
	if g.DRAMActiveRatio == nil && g.MemBusyRatio != nil {
		dram = "~" + num(g.MemBusyRatio, 100, "%") + " busy"
	}
	line := fmt.Sprintf("gpu %s/%s %s: mem %s/%s, DRAM %s, util %s, power %s/%s, temp %s",
		g.Host, g.Index, g.Name, num(g.MemUsedBytes, 1.0/(1<<30), "GiB"), num(g.MemTotalBytes, 1.0/(1<<30), "GiB"),
		dram, num(g.UtilRatio, 100, "%"), num(g.PowerW, 1, "W"), num(g.PowerLimitW, 1, "W"), num(g.TemperatureCelsius, 1, "°C"))
	if g.State == telemetry.Stale {
		line += " (STALE)"
	}
	if len(g.Endpoints) > 0 {
		line += " → " + strings.Join(g.Endpoints, ", ")
	}
	return line
}

// Pair formats p50/p99 of a distribution with its state; a quantile that
// is only a histogram bucket's edge carries "≤" or "≥" (telemetry.Bound).
func Pair(s telemetry.SignalSnapshot, now time.Time) string {
	if s.P50 == nil || s.P99 == nil {
		return stateWord(s, now)
	}
	return withState(s.P50Bound.Mark()+Number(*s.P50)+"/"+s.P99Bound.Mark()+Number(*s.P99)+s.Unit, s, now)
}

// meanNote is " (mean 3.90ms)" for a distribution whose p50 or p99 is only
// a bucket bound and whose histogram's sum is known: the one exact figure
// it gives; "" otherwise.
func meanNote(s telemetry.SignalSnapshot) string {
	if s.Mean == nil || s.P50 == nil || s.P99 == nil || (s.P50Bound == telemetry.NotBound && s.P99Bound == telemetry.NotBound) {
		return ""
	}
	return " (mean " + Number(*s.Mean) + s.Unit + ")"
}

// Value formats a gauge or rate with its unit and state.
func Value(s telemetry.SignalSnapshot, now time.Time) string {
	if s.Value == nil {
		return stateWord(s, now)
	}
	if s.Unit == "req" { // request counts are whole numbers
		return withState(fmt.Sprintf("%.0f", *s.Value), s, now)
	}
	return withState(Number(*s.Value)+s.Unit, s, now)
}

// Number prints a figure with sensible precision.
func Number(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "—"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func stateWord(s telemetry.SignalSnapshot, now time.Time) string {
	switch s.State {
	case telemetry.NoData:
		return "no data"
	case telemetry.Error:
		return "ERROR"
	case telemetry.Stale:
		return "STALE " + Age(s.Age(now))
	default:
		return "—"
	}
}

func withState(v string, s telemetry.SignalSnapshot, now time.Time) string {
	if s.Young {
		v += youngMark
	}
	switch s.State {
	case telemetry.Stale:
		return v + " (STALE " + Age(s.Age(now)) + ")"
	case telemetry.Error:
		return v + " (ERROR, " + Age(s.Age(now)) + " old)"
	}
	if s.Approx {
		return "~" + v
	}
	return v
}

// Age prints a duration as "12s", "3m", "2h".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
}

// engineLine lists the engine diagnosis signals an endpoint has, under
// its row ("" when it has none): distributions as p50/p99, the others
// as values, each with its state.
func engineLine(s map[telemetry.Signal]telemetry.SignalSnapshot, now time.Time) string {
	var parts []string
	for _, sig := range telemetry.DiagnosisSignals() {
		v, ok := s[sig]
		if !ok {
			continue
		}
		text := Value(v, now)
		if sig.Info().Distribution {
			text = Pair(v, now) + meanNote(v)
		}
		parts = append(parts, sig.Info().Title+" "+text)
	}
	if len(parts) == 0 {
		return ""
	}
	return "engine (server): " + strings.Join(parts, " · ")
}

// youngMark follows a counter's rate over a series younger than its rate
// window (telemetry.ReadsLowWhenYoung): it reads low. Said in words under
// the table.
const youngMark = "+"

// rateWindow names the span a rate or ratio is taken over when it is not
// the viewed window ("over 5m (PromQL window)"); "" when none is named.
func rateWindow(s telemetry.SignalSnapshot) string {
	d, what, ok := s.RateWindow()
	if !ok {
		return ""
	}
	return "over " + slo.FormatDuration(d) + " (" + what + ")"
}

// rateSignals are the figures of a text row and its engine line that can
// carry a rate window, in the order printed.
func rateSignals() []telemetry.Signal {
	return append([]telemetry.Signal{telemetry.OutputTPS, telemetry.MBU, telemetry.ErrorRate}, telemetry.DiagnosisSignals()...)
}

// rateWindows lists the distinct rate windows the snapshot's figures are
// taken over: one is said in the heading, several per endpoint.
func rateWindows(snap telemetry.Snapshot) []string {
	var out []string
	for _, ep := range snap.Endpoints {
		for _, sig := range rateSignals() {
			if rw := rateWindow(ep.Signals[sig]); rw != "" && !slices.Contains(out, rw) {
				out = append(out, rw)
			}
		}
	}
	return out
}

// errOverWindow reports whether some endpoint's error rate is over the
// viewed window rather than a rate window (a probe's, a direct scrape's).
func errOverWindow(snap telemetry.Snapshot) bool {
	for _, ep := range snap.Endpoints {
		if e := ep.Signals[telemetry.ErrorRate]; e.Value != nil && e.RateWindowS == 0 {
			return true
		}
	}
	return false
}

// rateLine is an endpoint's rate windows, figure by figure ("" when it
// names none), for a snapshot whose figures do not share one.
func rateLine(s map[telemetry.Signal]telemetry.SignalSnapshot) string {
	var parts []string
	for _, sig := range rateSignals() {
		if rw := rateWindow(s[sig]); rw != "" {
			parts = append(parts, sig.Info().Title+" "+rw)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "rates: " + strings.Join(parts, ", ")
}

// youngLine says what the young mark on an endpoint's figures means (""
// when none carries it): one line naming them all.
func youngLine(s map[telemetry.Signal]telemetry.SignalSnapshot) string {
	var names []string
	var age time.Duration
	for _, sig := range rateSignals() {
		if v := s[sig]; v.Young && v.Value != nil {
			names = append(names, sig.Info().Title)
			age = max(age, time.Duration(v.SeriesAgeS*float64(time.Second)))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return youngMark + " " + strings.Join(names, ", ") + ": rates over a series " + Age(age) +
		" old, younger than their rate window: they read low"
}

// targetLine says a down or gone target, since when and why ("DOWN since
// 15:04:05 (1m12s): scrape failed: …"), or a model row's "1 of 2 replicas
// down"; "" while its targets are up.
func targetLine(ep telemetry.Endpoint, now time.Time) string {
	if h, ok := ep.Target(); ok {
		return strings.ToUpper(h.State) + " since " + h.Since.In(now.Location()).Format(time.TimeOnly) + " (" + Age(now.Sub(h.Since)) + "): " + h.Reason
	}
	if down, of, ok := ep.ReplicasDown(); ok && down > 0 {
		return fmt.Sprintf("%d of %d replicas down", down, of)
	}
	return ""
}
