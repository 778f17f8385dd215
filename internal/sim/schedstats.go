package sim

import (
	"sync/atomic"
	"time"
)

// ScheduleStats summarises the simulator's own token timing error: for
// every token written to a client, (time its flush returned − the engine
// step deadline that produced it). It measures the simulator, not the
// simulated GPU, and should stay far below the step times it emulates.
type ScheduleStats struct {
	Count         int64
	Mean          time.Duration
	P50, P90, P99 time.Duration
	Max           time.Duration
}

// schedHist is a lock-free linear histogram (5 µs buckets up to 50 ms) so
// hundreds of stream handlers can record without a mutex. Count and mean
// are derived from the buckets to keep recording to one contended atomic.
type schedHist struct {
	buckets [schedBuckets]atomic.Int64
	maxNs   atomic.Int64
}

const (
	schedRes     = 5 * time.Microsecond
	schedBuckets = 10001 // last bucket collects everything >= 50 ms
)

// recordBatch records now − t for each token deadline t.
func (h *schedHist) recordBatch(now int64, deadlines []int64) {
	for _, t := range deadlines {
		h.record(time.Duration(now - t))
	}
}

func (h *schedHist) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := min(int(d/schedRes), schedBuckets-1)
	h.buckets[i].Add(1)
	for m := h.maxNs.Load(); int64(d) > m; m = h.maxNs.Load() {
		if h.maxNs.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

func (h *schedHist) reset() {
	for i := range h.buckets {
		h.buckets[i].Store(0)
	}
	h.maxNs.Store(0)
}

func (h *schedHist) stats() ScheduleStats {
	var counts [schedBuckets]int64
	var n int64
	var sum float64
	for i := range h.buckets {
		counts[i] = h.buckets[i].Load()
		n += counts[i]
		sum += float64(counts[i]) * (float64(i) + 0.5) * float64(schedRes)
	}
	st := ScheduleStats{Count: n, Max: time.Duration(h.maxNs.Load())}
	if n == 0 {
		return st
	}
	st.Mean = time.Duration(sum / float64(n))
	q := func(p float64) time.Duration {
		rank := int64(p*float64(n-1)) + 1
		var c int64
		for i, v := range counts {
			c += v
			if c >= rank {
				// Upper edge of the bucket: conservative by < 5 µs.
				return time.Duration(i+1) * schedRes
			}
		}
		return st.Max
	}
	st.P50, st.P90, st.P99 = q(0.50), q(0.90), q(0.99)
	return st
}
