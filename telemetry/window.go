package telemetry

import (
	"math"
	"slices"
	"sort"
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
//
// Only filled slots are held, oldest first, and they grow as data comes
// (nothing is allocated up front for the whole span). A slot's cumulative
// counts are float32 while every value is exactly a float32 (increments of
// Prometheus counters are integers, exact below 2^24); the first value
// that is not switches the whole window to float64, so counts are never
// rounded.
type histWindow struct {
	res    time.Duration
	span   int64 // slots older than newest−span are dropped
	bounds []float64
	slotAt []int64   // slot start, ascending
	sums   []float64 // per slot
	c32    []float32 // counts, len(bounds) per slot, while all exact
	c64    []float64 // counts once one is not a float32
}

func newHistWindow(res, span time.Duration) *histWindow {
	n := int64(span / res)
	if n < 1 {
		n = 1
	}
	return &histWindow{res: res, span: n * int64(res)}
}

// reset empties the window, keeping its buffers.
func (h *histWindow) reset() {
	h.slotAt, h.sums, h.c32, h.c64 = h.slotAt[:0], h.sums[:0], h.c32[:0], nil
}

// slot returns the index of the slot starting at at, inserting an empty
// one (in order) where there is none.
func (h *histWindow) slot(at int64) int {
	n := len(h.slotAt)
	if n > 0 && h.slotAt[n-1] == at {
		return n - 1
	}
	i := n
	if n > 0 && h.slotAt[n-1] > at {
		i = sort.Search(n, func(k int) bool { return h.slotAt[k] >= at })
		if h.slotAt[i] == at {
			return i
		}
	}
	nb := len(h.bounds)
	h.slotAt = slices.Insert(h.slotAt, i, at)
	h.sums = slices.Insert(h.sums, i, 0)
	if h.c64 != nil {
		h.c64 = slices.Insert(h.c64, i*nb, make([]float64, nb)...)
	} else {
		h.c32 = slices.Insert(h.c32, i*nb, make([]float32, nb)...)
	}
	return i
}

// evict drops the slots a ring of span would have overwritten by now.
func (h *histWindow) evict() {
	n := len(h.slotAt)
	if n == 0 {
		return
	}
	oldest := h.slotAt[n-1] - h.span
	k := 0
	for k < n && h.slotAt[k] <= oldest {
		k++
	}
	if k == 0 {
		return
	}
	nb := len(h.bounds)
	h.slotAt = append(h.slotAt[:0], h.slotAt[k:]...)
	h.sums = append(h.sums[:0], h.sums[k:]...)
	if h.c64 != nil {
		h.c64 = append(h.c64[:0], h.c64[k*nb:]...)
	} else {
		h.c32 = append(h.c32[:0], h.c32[k*nb:]...)
	}
}

// widen switches the counts to float64.
func (h *histWindow) widen() {
	h.c64 = make([]float64, len(h.c32), cap(h.c32))
	for i, v := range h.c32 {
		h.c64[i] = float64(v)
	}
	h.c32 = nil
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
		h.reset()
	}
	at := t.UnixNano() - t.UnixNano()%int64(h.res)
	i := h.slot(at)
	nb := len(h.bounds)
	if h.c64 == nil {
		s := h.c32[i*nb : (i+1)*nb]
		for j, bk := range b {
			v := float64(s[j]) + bk.Count
			if float64(float32(v)) != v {
				h.widen()
				break
			}
		}
		if h.c64 == nil {
			for j, bk := range b {
				s[j] = float32(float64(s[j]) + bk.Count)
			}
		}
	}
	if h.c64 != nil {
		s := h.c64[i*nb : (i+1)*nb]
		for j, bk := range b {
			s[j] += bk.Count
		}
	}
	if !math.IsNaN(sum) {
		h.sums[i] += sum
	}
	h.evict()
}

// addHistory records an increment older than the live data. It is
// dropped (false) when its layout differs from the live one, which it must
// not reset, or when it lies beyond the span before the newest data.
func (h *histWindow) addHistory(t time.Time, buckets []Bucket, sum float64) bool {
	if h.bounds != nil && !sameBounds(h.bounds, normaliseBuckets(buckets)) {
		return false
	}
	at := t.UnixNano() - t.UnixNano()%int64(h.res)
	if n := len(h.slotAt); n > 0 && at <= h.slotAt[n-1]-h.span {
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
	nb := len(h.bounds)
	for i, at := range h.slotAt {
		// A slot counts when its midpoint lies in the window, so a window
		// is never more than half a slot off at either end.
		mid := at + int64(h.res)/2
		if mid <= f || at > t {
			continue
		}
		if h.c64 != nil {
			for j, v := range h.c64[i*nb : (i+1)*nb] {
				buckets[j].Count += v
			}
		} else {
			for j, v := range h.c32[i*nb : (i+1)*nb] {
				buckets[j].Count += float64(v)
			}
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
