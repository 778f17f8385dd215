package scrape

import (
	"math"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// histogram emits each model's bucket increments, summed over its series.
func (sc *scrape) histogram(sig telemetry.Signal, a engines.Alias) {
	f := sc.page.Families[a.Name]
	accs := map[*modelVals]*histAcc{}
	var order []*modelVals
	for _, ser := range f.Series {
		if !matches(a, ser) {
			continue
		}
		rows, n := sc.rowsOf(ser)
		for _, mv := range rows[:n] {
			sc.s.st.histDelta(a.Name, ser, a.Factor(), accFor(accs, &order, mv))
		}
	}
	for _, mv := range order {
		acc := accs[mv]
		switch {
		case acc.reset > 0:
			// A restart inside the interval: skip it (no spike).
		case acc.nan > 0:
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindNoData, Signal: sig})
		case acc.ok > 0:
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindHistogram, Signal: sig,
				Buckets: acc.buckets, Value: acc.sum})
			if sig == telemetry.ITL {
				mv.itl, mv.hasITL = *acc, true
			}
		}
	}
}

// gauge emits each model's gauge, summed, maxed or averaged over its series.
func (sc *scrape) gauge(sig telemetry.Signal, a engines.Alias) {
	type acc struct {
		v, sum float64
		n      int
	}
	f := sc.page.Families[a.Name]
	accs := map[*modelVals]*acc{}
	var order []*modelVals
	for _, ser := range f.Series {
		if !matches(a, ser) {
			continue
		}
		rows, n := sc.rowsOf(ser)
		for _, mv := range rows[:n] {
			g := accs[mv]
			if g == nil {
				g = &acc{v: math.Inf(-1)}
				if a.Agg != engines.Max {
					g.v = 0
				}
				accs[mv] = g
				order = append(order, mv)
			}
			v := ser.Value * a.Factor()
			switch {
			case math.IsNaN(v) || math.IsNaN(g.v):
				g.v = math.NaN()
			case a.Agg == engines.Max:
				g.v = math.Max(g.v, v)
			default:
				g.v += v
			}
			g.sum += v
			g.n++
		}
	}
	for _, mv := range order {
		g := accs[mv]
		if a.Agg == engines.Mean {
			g.v /= float64(g.n)
		}
		sc.emitValue(mv, sig, g.v, false)
		if sig == telemetry.KVCache && !math.IsNaN(g.sum) {
			mv.kvSum, mv.kvN = g.sum, g.n
		}
	}
}

// counterAcc sums a model's counter increments over its series: since the
// previous scrape (the error rate's counts), or over the rate window.
type counterAcc struct {
	delta          float64
	ok, reset, nan int
	// span is the longest span any series' window increase covers.
	span time.Duration
}

func (c *counterAcc) add(d float64, s deltaStatus) {
	switch s {
	case deltaOK:
		c.delta += d
		c.ok++
	case deltaReset:
		c.reset++
	case deltaNaN:
		c.nan++
	}
}

// addWindow adds one series' increase over the rate window.
func (c *counterAcc) addWindow(inc float64, span time.Duration, s deltaStatus) {
	c.add(inc, s)
	if s == deltaOK {
		c.span = max(c.span, span)
	}
}

// usable reports whether the increments can be used: some known, no
// restart (window increases never carry one). nan is true when a NaN
// makes it "no data".
func (c *counterAcc) usable() (ok, nan bool) {
	if c == nil || c.reset > 0 {
		return false, false
	}
	if c.nan > 0 {
		return false, true
	}
	return c.ok > 0, false
}

// counterDeltas reads a counter family (or a histogram's _sum with
// fromSum) and returns per-model increases over the rate window.
func (sc *scrape) counterDeltas(name string, a engines.Alias, fromSum bool) (map[*modelVals]*counterAcc, []*modelVals) {
	f := sc.page.Families[name]
	accs := map[*modelVals]*counterAcc{}
	var order []*modelVals
	if f == nil || f.Err != nil {
		return accs, order
	}
	for _, ser := range f.Series {
		if !matches(a, ser) {
			continue
		}
		v := ser.Value
		if fromSum {
			v = ser.Sum
			if ser.Count < 0 || math.IsNaN(ser.Count) {
				v = math.NaN()
			}
		}
		rows, n := sc.rowsOf(ser)
		for _, mv := range rows[:n] {
			accFor(accs, &order, mv).addWindow(sc.s.st.counterIncrease(name, ser, v)) // computed once per scrape
		}
	}
	return accs, order
}

// counterRate emits Δcounter/Δt per model (output tok/s) over the rate
// window.
func (sc *scrape) counterRate(sig telemetry.Signal, a engines.Alias, fromSum bool) {
	accs, order := sc.counterDeltas(a.Name, a, fromSum)
	for _, mv := range order {
		c := accs[mv]
		ok, nan := c.usable()
		switch {
		case nan:
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindNoData, Signal: sig})
		case ok && c.span > 0:
			rate := c.delta * a.Factor() / c.span.Seconds()
			if a.Agg == engines.Mean {
				rate /= float64(c.ok) // per series (rank), not their sum
			}
			sc.emitRate(mv, sig, rate, false, c.span)
			if sig == telemetry.EngineReadBytes {
				mv.readBytesPerS, mv.hasReadBytes = rate, true
			}
		}
	}
}

// ratio emits Δnum/Δden per model (Triton mean durations, llama.cpp
// decode time per token), or for a CounterShare Δnum/(Δnum + Δper)
// (hits over hits plus misses); 0/0 is no data.
func (sc *scrape) ratio(sig telemetry.Signal, a engines.Alias) {
	num, order := sc.counterDeltas(a.Name, a, false)
	per, _ := sc.counterDeltas(a.Per, engines.Alias{}, false)
	for _, mv := range order {
		okN, nanN := num[mv].usable()
		okD, nanD := per[mv].usable()
		switch {
		case nanN || nanD:
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindNoData, Signal: sig})
		case okN && okD:
			den := per[mv].delta
			if a.Type == engines.CounterShare {
				den += num[mv].delta
			}
			if den <= 0 {
				sc.emit(mv, telemetry.Observation{Kind: telemetry.KindNoData, Signal: sig})
				continue
			}
			// Duration means stand in for a distribution (approximate:
			// Triton's E2E and queue time, llama.cpp's ITL); the
			// diagnosis ratios and shares are exact counts.
			sc.emitRate(mv, sig, num[mv].delta/den*a.Factor()+a.Offset, sig.Info().Distribution, max(num[mv].span, per[mv].span))
		}
	}
}
