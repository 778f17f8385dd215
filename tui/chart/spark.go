package chart

import (
	"math"

	"github.com/tokentop/tokentop/themes"
)

// Spark draws vals (one per cell, NaN = gap shown as a space). The scale
// is taken from the visible values each time (so one old spike that
// scrolled out does not flatten the line forever, the ntcharts pitfall):
// top = max(values, threshold), bottom = the minimum but never less than
// half the top's range, so small wobble stays small and a steady series
// does not look like noise. Cells above the SLO threshold thr (when
// hasThr) are painted "bad"; the SLO badge says it in words.
func Spark(vals []float64, thr float64, hasThr bool, levels []rune, r *themes.Roles) string {
	if len(vals) == 0 || len(levels) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hasThr && thr > hi {
		hi = thr
	}
	lo = math.Min(lo, hi/2)
	var l line
	top := len(levels) - 1
	for _, v := range vals {
		if !finite(v) {
			l.addRune(' ', r.Line)
			continue
		}
		i := top
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(top)))
		}
		i = min(max(i, 0), top)
		p := r.Line
		if hasThr && v > thr {
			p = r.Bad
		}
		l.addRune(levels[i], p)
	}
	return l.String()
}

// Resample returns vals stretched or squeezed to n points (nearest), for
// when the data was fetched at another width than the one drawn.
func Resample(vals []float64, n int) []float64 {
	if n <= 0 {
		return nil
	}
	if len(vals) == n {
		return vals
	}
	out := make([]float64, n)
	if len(vals) == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	for i := range out {
		out[i] = vals[i*len(vals)/n]
	}
	return out
}
