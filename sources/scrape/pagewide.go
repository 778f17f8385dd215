package scrape

import (
	"math"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// pageGauge reads a gauge whose series name no model (engines.Alias
// PageWide: a router's pool gauges, labelled by the pool): its series
// combined by the alias' Agg are the figure of every model the page
// serves. A page with no model yet gives it to none.
func (sc *scrape) pageGauge(sig telemetry.Signal, a engines.Alias) {
	v, n := 0.0, 0
	if a.Agg == engines.Max {
		v = math.Inf(-1)
	}
	for _, ser := range sc.page.Families[a.Name].Series {
		if !matches(a, ser) {
			continue
		}
		x := ser.Value * a.Factor()
		switch {
		case math.IsNaN(x) || math.IsNaN(v):
			v = math.NaN()
		case a.Agg == engines.Max:
			v = math.Max(v, x)
		default:
			v += x
		}
		n++
	}
	if n == 0 {
		return
	}
	if a.Agg == engines.Mean {
		v /= float64(n)
	}
	for _, mv := range sc.models {
		sc.emitValue(mv, sig, v, false)
	}
}
