package telemetry

import (
	"math"
	"time"
)

// Ring holds a fixed-resolution time series for charts: one slot per
// Resolution over Span, each slot the mean of what fell into it. Memory is
// fixed at creation (8 bytes a slot), however long ttftop runs.
type Ring struct {
	res   time.Duration
	sum   []float32
	count []uint32
	// head is the slot index of time headAt (truncated to res).
	head   int
	headAt int64 // unix nanos of the newest slot's start
}

// NewRing returns a ring of span/res slots (at least one).
func NewRing(res, span time.Duration) *Ring {
	n := int(span / res)
	if n < 1 {
		n = 1
	}
	return &Ring{res: res, sum: make([]float32, n), count: make([]uint32, n), headAt: math.MinInt64}
}

// Add records v at t. Values older than the span, or NaN, are ignored.
func (r *Ring) Add(t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	slotAt := t.UnixNano() - t.UnixNano()%int64(r.res)
	r.advance(slotAt)
	back := int((r.headAt - slotAt) / int64(r.res))
	if back >= len(r.sum) {
		return
	}
	i := (r.head - back + len(r.sum)) % len(r.sum)
	r.sum[i] += float32(v)
	r.count[i]++
}

// advance moves the head forward to slotAt, clearing skipped slots.
func (r *Ring) advance(slotAt int64) {
	if r.headAt == math.MinInt64 {
		r.headAt = slotAt
		return
	}
	if slotAt <= r.headAt {
		return
	}
	steps := int((slotAt - r.headAt) / int64(r.res))
	if steps > len(r.sum) {
		steps = len(r.sum)
	}
	for s := 0; s < steps; s++ {
		r.head = (r.head + 1) % len(r.sum)
		r.sum[r.head], r.count[r.head] = 0, 0
	}
	r.headAt = slotAt
}

// Points returns n evenly spaced points covering [now−span, now], oldest
// first; each is the mean of the slots it covers, NaN where nothing was
// observed (missing is never zero). A nil Ring (a track's chart is made
// on its first value) has observed nothing.
func (r *Ring) Points(now time.Time, span time.Duration, n int) []float64 {
	out := make([]float64, n)
	if n <= 0 {
		return out
	}
	if r == nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	slots := int(span / r.res)
	if slots < 1 {
		slots = 1
	}
	if slots > len(r.sum) {
		slots = len(r.sum)
	}
	nowSlot := now.UnixNano() - now.UnixNano()%int64(r.res)
	for p := 0; p < n; p++ {
		// slot range [from, to) counted back from now, oldest point first
		from := slots - (p * slots / n)
		to := slots - ((p + 1) * slots / n)
		var sum float64
		var cnt uint32
		for back := to; back < from; back++ {
			s, c := r.slot(nowSlot - int64(back)*int64(r.res))
			sum += s
			cnt += c
		}
		if cnt == 0 {
			out[p] = math.NaN()
		} else {
			out[p] = sum / float64(cnt)
		}
	}
	return out
}

// slot returns the sum and count of the slot starting at slotAt.
func (r *Ring) slot(slotAt int64) (float64, uint32) {
	if r.headAt == math.MinInt64 || slotAt > r.headAt {
		return 0, 0
	}
	back := int((r.headAt - slotAt) / int64(r.res))
	if back >= len(r.sum) {
		return 0, 0
	}
	i := (r.head - back + len(r.sum)) % len(r.sum)
	return float64(r.sum[i]), r.count[i]
}
