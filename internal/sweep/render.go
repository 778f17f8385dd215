package sweep

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Lines are the SLO thresholds the view draws, in milliseconds (nil =
// no objective on that signal).
type Lines struct {
	TTFTms, TPOTms *float64
}

// LinesOf takes the percentile objectives' thresholds on TTFT and TPOT
// (the strictest where several apply).
func LinesOf(objs []slo.Objective) Lines {
	var l Lines
	for _, o := range objs {
		if o.Kind != slo.Percentile || !(o.Threshold > 0) {
			continue
		}
		v := o.Threshold * 1000
		switch o.Signal {
		case telemetry.TTFT:
			if l.TTFTms == nil || v < *l.TTFTms {
				l.TTFTms = &v
			}
		case telemetry.TPOT:
			if l.TPOTms == nil || v < *l.TPOTms {
				l.TPOTms = &v
			}
		}
	}
	return l
}

const barWidth = 16

// Table writes the steps (and the running one, marked "…") as rows of
// figures and bars against concurrency: TTFT and TPOT p95 with the SLO
// line │ drawn where the objective's threshold falls, and output tok/s.
// A row ends in ok when the step met every objective, MISS when not.
func Table(w io.Writer, steps []Step, cur *Step, lines Lines) error {
	rows := append([]Step(nil), steps...)
	if cur != nil {
		rows = append(rows, *cur)
	}
	ttftMax := scaleOf(rows, func(s Step) *float64 { return s.TTFTp95ms }, lines.TTFTms)
	tpotMax := scaleOf(rows, func(s Step) *float64 { return s.TPOTp95ms }, lines.TPOTms)
	tpsMax := scaleOf(rows, func(s Step) *float64 { return s.OutputTPS }, nil)
	var b strings.Builder
	fmt.Fprintf(&b, "%5s %9s %9s %9s %9s %8s %5s  %-*s %-*s %-*s\n", "conc", "in flight", "TTFT p95", "TPOT p95", "out tok/s", "goodput", "SLO",
		barWidth, "TTFT"+lineLabel(lines.TTFTms), barWidth, "TPOT"+lineLabel(lines.TPOTms), barWidth, "tok/s")
	for i, s := range rows {
		verdict := "MISS"
		switch {
		case cur != nil && i == len(rows)-1:
			verdict = "…"
		case len(s.Objectives) == 0:
			verdict = "-"
		case s.MeetsObjectives:
			verdict = "ok"
		}
		fmt.Fprintf(&b, "%5d %9s %9s %9s %9s %8s %5s  %s %s %s\n", s.Concurrency, inFlightText(s), msText(s.TTFTp95ms), msText(s.TPOTp95ms),
			numText(s.OutputTPS, "%.0f"), pctText(s.Goodput), verdict,
			bar(s.TTFTp95ms, ttftMax, lines.TTFTms), bar(s.TPOTp95ms, tpotMax, lines.TPOTms), bar(s.OutputTPS, tpsMax, nil))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Throttled reports that the step kept fewer requests in flight than its
// concurrency (under 90 %): a ceiling held starts back (HeldBackBy).
func (s Step) Throttled() bool {
	return s.AchievedConcurrency != nil && *s.AchievedConcurrency < 0.9*float64(s.Concurrency)
}

// inFlightText is the achieved concurrency, "!" marking a throttled step.
func inFlightText(s Step) string {
	if s.AchievedConcurrency == nil {
		return "n/a"
	}
	t := fmt.Sprintf("%.1f", *s.AchievedConcurrency)
	if s.Throttled() {
		t += "!"
	}
	return t
}

// Line is one progress line for a log (stderr that is not a terminal).
func Line(s Step, running bool) string {
	state := s.End
	if running {
		state = "measuring"
	}
	return fmt.Sprintf("concurrency %d: %d requests (%d failed), %s in flight, TTFT p95 %s, TPOT p95 %s, %s output tok/s, goodput %s (%s, %.1fs)",
		s.Concurrency, s.Requests, s.Failed, inFlightText(s), msText(s.TTFTp95ms), msText(s.TPOTp95ms), numText(s.OutputTPS, "%.0f"),
		pctText(s.Goodput), state, s.DurationMS/1000)
}

func lineLabel(v *float64) string {
	if v == nil {
		return ""
	}
	return " │=" + trimMS(*v)
}

func scaleOf(rows []Step, of func(Step) *float64, line *float64) float64 {
	m := 0.0
	if line != nil {
		m = *line * 1.25 // the line sits at 80 % of the bar
	}
	for _, s := range rows {
		if v := of(s); v != nil {
			m = math.Max(m, *v)
		}
	}
	return m
}

// bar draws v on a barWidth scale of full; the SLO line, when given, is
// a │ at its position (over the bar where the value passes it).
func bar(v *float64, full float64, line *float64) string {
	cells := []rune(strings.Repeat(" ", barWidth))
	if v != nil && full > 0 {
		n := int(math.Round(*v / full * barWidth))
		for i := 0; i < min(n, barWidth); i++ {
			cells[i] = '█'
		}
	}
	if line != nil && full > 0 {
		if i := int(math.Round(*line/full*barWidth)) - 1; i >= 0 && i < barWidth {
			if cells[i] == '█' {
				cells[i] = '┃'
			} else {
				cells[i] = '│'
			}
		}
	}
	return string(cells)
}

func msText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return trimMS(*v)
}

func trimMS(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	default:
		return fmt.Sprintf("%.1fms", v)
	}
}

func numText(v *float64, format string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(format, *v)
}

func pctText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}
