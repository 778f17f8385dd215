package slo

import (
	"slices"
	"time"
)

// slotsPerWindow is each window's resolution: a window's edge is at most
// 1/60 of it off (a minute on the 1 h window), and the memory of a window
// is fixed at 61 slots whatever the period: 28 days cost what 10 minutes do.
const slotsPerWindow = 60

// ring counts good and total events in the fixed time slots of one window.
// A slot covers (end−res, end], so a window (now−W, now] on slot edges is
// exactly its slots.
type ring struct {
	res   int64 // slot width, ns
	end   []int64
	good  []float64
	total []float64
}

func newRing(window time.Duration) *ring {
	res := max(int64(window)/slotsPerWindow, 1)
	n := slotsPerWindow + 1 // a full window plus the partly elapsed slot
	return &ring{res: res, end: make([]int64, n), good: make([]float64, n), total: make([]float64, n)}
}

func (r *ring) slotEnd(t int64) int64 {
	rem := t % r.res
	if rem == 0 {
		return t
	}
	if rem < 0 {
		rem += r.res
	}
	return t - rem + r.res
}

func (r *ring) index(end int64) int {
	i := (end / r.res) % int64(len(r.end))
	if i < 0 {
		i += int64(len(r.end))
	}
	return int(i)
}

// add counts events at t; events older than what the slot now holds (out
// of the window) are dropped.
func (r *ring) add(t time.Time, good, total float64) {
	e := r.slotEnd(t.UnixNano())
	i := r.index(e)
	switch {
	case r.end[i] == e:
	case r.end[i] > e:
		return
	default:
		r.end[i], r.good[i], r.total[i] = e, 0, 0
	}
	r.good[i] += good
	r.total[i] += total
}

// sum returns good and total over (now−window, now]. The oldest slot, when
// only partly inside, counts for the share of it that is: events are
// assumed spread evenly within a slot.
func (r *ring) sum(now time.Time, window time.Duration) (good, total float64) {
	t := now.UnixNano()
	from := t - int64(window)
	for i, e := range r.end {
		if r.total[i] == 0 || e <= from || e-r.res >= t {
			continue
		}
		w := 1.0
		if e-r.res < from {
			w = float64(e-from) / float64(r.res)
		}
		good += w * r.good[i]
		total += w * r.total[i]
	}
	return good, total
}

// counts keeps one ring per distinct window an objective reads (each burn
// window and the period), fed by one kind of source.
type counts struct {
	windows []time.Duration
	rings   []*ring

	firstAt  time.Time // first event counted
	lastAt   time.Time // last event or report of any kind
	interval time.Duration
	errAt    time.Time // last failure report (scrape, query)
	err      string
	noDataAt time.Time // last "answered, but nothing" report
	approxAt time.Time // last event counted by interpolation
}

func newCounts(windows []time.Duration) *counts {
	ws := slices.Clone(windows)
	slices.Sort(ws)
	ws = slices.Compact(ws)
	c := &counts{windows: ws, rings: make([]*ring, len(ws))}
	for i, w := range ws {
		c.rings[i] = newRing(w)
	}
	return c
}

func (c *counts) add(t time.Time, good, total float64) {
	if c.firstAt.IsZero() || t.Before(c.firstAt) {
		c.firstAt = t
	}
	for _, r := range c.rings {
		r.add(t, good, total)
	}
}

// sum is good and total over the window ending at now; ok is false when
// the window is not one this counter keeps.
func (c *counts) sum(now time.Time, window time.Duration) (good, total float64, ok bool) {
	i, found := slices.BinarySearch(c.windows, window)
	if !found {
		return 0, 0, false
	}
	good, total = c.rings[i].sum(now, window)
	return min(good, total), total, true
}

func (c *counts) seen(o time.Time, interval time.Duration) {
	if o.After(c.lastAt) {
		c.lastAt = o
	}
	if interval > 0 {
		c.interval = interval
	}
}
