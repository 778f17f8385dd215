package scrape

import (
	"math"
	"sort"

	"github.com/ttftop/ttftop/telemetry"
)

// histAcc sums bucket increments of several series (engines, ranks) of one
// model by upper bound.
type histAcc struct {
	buckets        []telemetry.Bucket
	sum            float64
	ok, reset, nan int
}

func (a *histAcc) note(s deltaStatus) {
	switch s {
	case deltaOK:
		a.ok++
	case deltaReset:
		a.reset++
	case deltaNaN:
		a.nan++
	}
}

// add accumulates cur − prev (same bounds) with bounds and sum scaled.
func (a *histAcc) add(prev, cur []telemetry.Bucket, sumDelta, scale float64) {
	a.sum += sumDelta * scale
	if a.buckets == nil {
		a.buckets = make([]telemetry.Bucket, len(cur))
		for i := range cur {
			a.buckets[i] = telemetry.Bucket{UpperBound: scaleBound(cur[i].UpperBound, scale), Count: cur[i].Count - prev[i].Count}
		}
		return
	}
	if len(a.buckets) == len(cur) {
		same := true
		for i := range cur {
			if a.buckets[i].UpperBound != scaleBound(cur[i].UpperBound, scale) {
				same = false
				break
			}
		}
		if same {
			for i := range cur {
				a.buckets[i].Count += cur[i].Count - prev[i].Count
			}
			return
		}
	}
	// Different layouts: merge by bound (as sum by (le) does).
	byBound := map[float64]float64{}
	for _, b := range a.buckets {
		byBound[b.UpperBound] += b.Count
	}
	for i := range cur {
		byBound[scaleBound(cur[i].UpperBound, scale)] += cur[i].Count - prev[i].Count
	}
	a.buckets = a.buckets[:0]
	for ub, c := range byBound {
		a.buckets = append(a.buckets, telemetry.Bucket{UpperBound: ub, Count: c})
	}
	sort.Slice(a.buckets, func(i, j int) bool { return a.buckets[i].UpperBound < a.buckets[j].UpperBound })
}

// count returns the number of new observations (the +Inf increment).
func (a *histAcc) count() float64 {
	if len(a.buckets) == 0 {
		return 0
	}
	return a.buckets[len(a.buckets)-1].Count
}

func scaleBound(b, scale float64) float64 {
	if scale == 1 || math.IsInf(b, 0) {
		return b
	}
	return b * scale
}
