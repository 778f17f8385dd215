package scrape

import (
	"math"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// errorRate emits Δfailed of Δall requests per model (telemetry.ErrorCounts).
func (sc *scrape) errorRate() {
	var ec *engines.ErrorCounters
	for i := range sc.spec.Errors {
		if f := sc.page.Families[sc.spec.Errors[i].Failed]; f != nil {
			ec = &sc.spec.Errors[i]
			break
		}
	}
	if ec == nil {
		return
	}
	for _, n := range ec.Names() {
		if f := sc.page.Families[n]; f != nil && f.Err != nil {
			sc.failSignal(telemetry.ErrorRate, engines.Alias{Name: n}, f.Err)
			return
		}
	}
	failed := map[*modelVals]*counterAcc{}
	all := map[*modelVals]*counterAcc{}
	var order []*modelVals
	get := func(m map[*modelVals]*counterAcc, mv *modelVals) *counterAcc {
		c := m[mv]
		if c == nil {
			c = &counterAcc{}
			m[mv] = c
			order = appendOnce(order, mv)
		}
		return c
	}
	isFailed := func(v string) bool {
		if ec.FailedLabel == "" {
			return true
		}
		for _, fv := range ec.FailedValues {
			if v == fv {
				return true
			}
		}
		return false
	}
	read := func(name string, toFailed, toAll bool, filter bool) {
		f := sc.page.Families[name]
		if f == nil {
			return
		}
		for _, ser := range f.Series {
			d, st := sc.s.st.counterDelta(name, ser, ser.Value)
			rows, n := sc.rowsOf(ser)
			for _, mv := range rows[:n] {
				if toAll {
					get(all, mv).add(d, st)
				}
				if toFailed && (!filter || isFailed(ser.Label(ec.FailedLabel))) {
					get(failed, mv).add(d, st)
				}
			}
		}
	}
	switch {
	case ec.All == ec.Failed:
		read(ec.Failed, true, true, true)
	case ec.All != "":
		read(ec.Failed, true, false, true)
		read(ec.All, false, true, false)
	default:
		read(ec.Failed, true, true, true)
		read(ec.Succeeded, false, true, false)
	}
	for _, mv := range order {
		okA, nanA := all[mv].usable()
		okF, nanF := failed[mv].usable()
		if failed[mv] == nil {
			okF = okA // no failure series for this model: none failed
		}
		switch {
		case nanA || nanF:
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindNoData, Signal: telemetry.ErrorRate})
		case okA && okF:
			var bad float64
			if c := failed[mv]; c != nil {
				bad = c.delta
			}
			// Counts, not a ratio: the store sums them over its window, so
			// a scrape without requests is no news rather than no data.
			total := max(all[mv].delta, 0)
			b, sum := telemetry.ErrorCounts(math.Min(bad, total), total)
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindHistogram, Signal: telemetry.ErrorRate, Buckets: b, Value: sum})
		}
	}
}

func appendOnce(order []*modelVals, mv *modelVals) []*modelVals {
	for _, o := range order {
		if o == mv {
			return order
		}
	}
	return append(order, mv)
}
