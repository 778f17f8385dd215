package telemetry

import (
	"math"
	"time"
)

// sampleWindow keeps the most recent raw samples (at most cap), for
// quantiles over a time window. Bounded by count, not by time, so memory
// is fixed whatever the probe rate.
type sampleWindow struct {
	at   []int64
	v    []float32
	max  int
	next int
	full bool
}

// newSampleWindow returns a window of at most capacity samples; its
// memory grows with the samples (PromQL and scrape tracks of distribution
// signals, which get histograms, never hold any).
func newSampleWindow(capacity int) *sampleWindow {
	return &sampleWindow{max: capacity}
}

func (w *sampleWindow) add(t time.Time, v float64) {
	if w.max <= 0 {
		return
	}
	if !w.full {
		w.at = append(w.at, t.UnixNano())
		w.v = append(w.v, float32(v))
		if len(w.at) == w.max {
			w.full = true
		}
		return
	}
	w.at[w.next] = t.UnixNano()
	w.v[w.next] = float32(v)
	w.next = (w.next + 1) % len(w.at)
}

// since returns the samples observed in (from, to].
func (w *sampleWindow) since(from, to time.Time) []float64 {
	f, t := from.UnixNano(), to.UnixNano()
	var out []float64
	for i, at := range w.at {
		if at > f && at <= t {
			out = append(out, float64(w.v[i]))
		}
	}
	return out
}

// histWindow keeps histogram increments summed into fixed time slots, so a
// window's distribution is the sum of its slots' buckets: the same thing
// Prometheus computes with increase(x_bucket[w]).
type histWindow struct {
	res    time.Duration
	bounds []float64
	slots  [][]float64 // cumulative counts per bound, per slot; nil = empty
	sums   []float64
	slotAt []int64
}

func newHistWindow(res, span time.Duration) *histWindow {
	n := int(span / res)
	if n < 1 {
		n = 1
	}
	return &histWindow{res: res, slots: make([][]float64, n), sums: make([]float64, n), slotAt: make([]int64, n)}
}

// add records one increment. A change of bucket layout (engine restarted
// with other buckets) starts the window afresh rather than mixing layouts.
func (h *histWindow) add(t time.Time, buckets []Bucket, sum float64) {
	b := normaliseBuckets(buckets)
	if !sameBounds(h.bounds, b) {
		h.bounds = make([]float64, len(b))
		for i, bk := range b {
			h.bounds[i] = bk.UpperBound
		}
		for i := range h.slots {
			h.slots[i], h.sums[i], h.slotAt[i] = nil, 0, 0
		}
	}
	at := t.UnixNano() - t.UnixNano()%int64(h.res)
	i := int((at / int64(h.res)) % int64(len(h.slots)))
	if h.slotAt[i] != at || h.slots[i] == nil {
		h.slots[i] = make([]float64, len(b))
		h.sums[i] = 0
		h.slotAt[i] = at
	}
	for j, bk := range b {
		h.slots[i][j] += bk.Count
	}
	if !math.IsNaN(sum) {
		h.sums[i] += sum
	}
}

// addHistory records an increment older than the live data. It is
// dropped (false) when its layout differs from the live one, which it must
// not reset, or when its slot already holds newer data (beyond the span).
func (h *histWindow) addHistory(t time.Time, buckets []Bucket, sum float64) bool {
	if h.bounds != nil && !sameBounds(h.bounds, normaliseBuckets(buckets)) {
		return false
	}
	at := t.UnixNano() - t.UnixNano()%int64(h.res)
	i := int((at / int64(h.res)) % int64(len(h.slots)))
	if h.slots[i] != nil && h.slotAt[i] > at {
		return false
	}
	h.add(t, buckets, sum)
	return true
}

// window sums the slots in (from, to] into cumulative buckets.
func (h *histWindow) window(from, to time.Time) (buckets []Bucket, sum float64) {
	if h.bounds == nil {
		return nil, 0
	}
	buckets = make([]Bucket, len(h.bounds))
	for j, ub := range h.bounds {
		buckets[j].UpperBound = ub
	}
	f, t := from.UnixNano(), to.UnixNano()
	for i, s := range h.slots {
		// A slot counts when its midpoint lies in the window, so a window
		// is never more than half a slot off at either end.
		mid := h.slotAt[i] + int64(h.res)/2
		if s == nil || mid <= f || h.slotAt[i] > t {
			continue
		}
		for j := range s {
			buckets[j].Count += s[j]
		}
		sum += h.sums[i]
	}
	return buckets, sum
}

// totals sums the window's observations: the sum and the total count.
func (h *histWindow) totals(from, to time.Time) (buckets []Bucket, sum, total float64) {
	b, sum := h.window(from, to)
	if len(b) == 0 {
		return nil, 0, 0
	}
	return b, sum, b[len(b)-1].Count
}

func sameBounds(bounds []float64, b []Bucket) bool {
	if len(bounds) != len(b) {
		return false
	}
	for i := range b {
		if bounds[i] != b[i].UpperBound {
			return false
		}
	}
	return true
}
