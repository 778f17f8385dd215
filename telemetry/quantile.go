package telemetry

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Bucket is one cumulative histogram bucket: Count observations ≤ UpperBound.
type Bucket struct {
	UpperBound float64 `json:"le"`
	Count      float64 `json:"count"`
}

// HistogramQuantile returns the q-quantile of a cumulative histogram with the
// same maths as Prometheus histogram_quantile (promql/quantile.go
// bucketQuantile): buckets sorted by upper bound, equal bounds merged, counts
// forced monotonic, linear interpolation inside the bucket holding the rank,
// the lowest bucket starting at 0 (when its bound is positive), and a rank in
// the +Inf bucket answered with the highest finite bound. It returns NaN when
// there are fewer than two buckets, no +Inf bucket or no observations.
// buckets is not modified.
func HistogramQuantile(q float64, buckets []Bucket) float64 {
	v, _ := histogramQuantile(q, buckets)
	return v
}

// Bound says what a shown quantile is when the histogram cannot place it
// inside a bucket with two finite edges.
type Bound string

const (
	// NotBound: interpolated between two finite bucket edges, or taken
	// from raw samples.
	NotBound Bound = ""
	// BoundUpper: the rank falls in the lowest bucket, whose lower edge
	// (0) is an assumption; the quantile is only known to be ≤ the
	// bucket's upper edge, which is the value shown.
	BoundUpper Bound = "upper"
	// BoundLower: the rank falls in the +Inf bucket; the quantile is only
	// known to be ≥ the highest finite bound, which is the value shown
	// (and what histogram_quantile answers).
	BoundLower Bound = "lower"
)

// Mark is the prefix a view writes before a bounded quantile: "≤" (at
// most the lowest bucket's upper edge), "≥" (at least the highest finite
// bound), "" for a quantile that is not a bound.
func (b Bound) Mark() string {
	switch b {
	case BoundUpper:
		return "≤"
	case BoundLower:
		return "≥"
	}
	return ""
}

// HistogramQuantileBound is the q-quantile as a reader should see it: where
// HistogramQuantile interpolates inside the lowest bucket (between an
// assumed 0 and its upper edge: all 184 queue times in le="0.3" read
// "p50 150ms" while their mean is 3.9 ms), it answers the bucket's upper
// edge with BoundUpper; a rank in the +Inf bucket answers the highest
// finite bound with BoundLower. Anything else is HistogramQuantile's value
// with NotBound. Objectives keep comparing HistogramQuantile (Prometheus's
// maths); this is for display.
func HistogramQuantileBound(q float64, buckets []Bucket) (float64, Bound) {
	v, where := histogramQuantile(q, buckets)
	switch where {
	case rankInLowest:
		return normaliseBuckets(buckets)[0].UpperBound, BoundUpper
	case rankInInf:
		return v, BoundLower
	}
	return v, NotBound
}

// rankBucket says in which bucket histogramQuantile found the rank.
type rankBucket uint8

const (
	rankNone     rankBucket = iota // NaN, ±Inf: no bucket
	rankInside                     // between two finite edges
	rankInLowest                   // lowest bucket
	rankInInf                      // +Inf bucket
)

func histogramQuantile(q float64, buckets []Bucket) (float64, rankBucket) {
	if math.IsNaN(q) {
		return math.NaN(), rankNone
	}
	if q < 0 {
		return math.Inf(-1), rankNone
	}
	if q > 1 {
		return math.Inf(1), rankNone
	}
	b := normaliseBuckets(buckets)
	if len(b) < 2 || !math.IsInf(b[len(b)-1].UpperBound, 1) {
		return math.NaN(), rankNone
	}
	observations := b[len(b)-1].Count
	if observations == 0 || math.IsNaN(observations) {
		return math.NaN(), rankNone
	}
	rank := q * observations
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
	if i == len(b)-1 {
		return b[len(b)-2].UpperBound, rankInInf
	}
	if i == 0 && b[0].UpperBound <= 0 {
		return b[0].UpperBound, rankInLowest
	}
	start, end, count := 0.0, b[i].UpperBound, b[i].Count
	where := rankInLowest
	if i > 0 {
		start = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
		where = rankInside
	}
	return start + (end-start)*(rank/count), where
}

// CountAtOrBelow estimates how many observations are ≤ threshold, by linear
// interpolation inside the bucket containing it. exact is true when the
// threshold is a bucket edge (or beyond the data), the case an SLO should use.
func CountAtOrBelow(threshold float64, buckets []Bucket) (count, total float64, exact bool) {
	b := normaliseBuckets(buckets)
	if len(b) == 0 || !math.IsInf(b[len(b)-1].UpperBound, 1) {
		return math.NaN(), math.NaN(), false
	}
	total = b[len(b)-1].Count
	prevBound, prevCount := 0.0, 0.0
	for _, bk := range b {
		if bk.UpperBound == threshold {
			return bk.Count, total, true
		}
		if bk.UpperBound > threshold {
			if math.IsInf(bk.UpperBound, 1) {
				// Beyond the highest finite bound nothing can be said more
				// precisely than "everything up to it".
				return prevCount, total, false
			}
			if threshold <= prevBound {
				return prevCount, total, false
			}
			frac := (threshold - prevBound) / (bk.UpperBound - prevBound)
			return prevCount + frac*(bk.Count-prevCount), total, false
		}
		prevBound, prevCount = bk.UpperBound, bk.Count
	}
	return total, total, true
}

// normaliseBuckets sorts, merges equal bounds (le="5" and le="5.0") and
// makes counts monotonic, as Prometheus does before interpolating.
//
// Buckets already in that form (as every source sends them) are returned
// as they are, not copied: callers only read the result.
func normaliseBuckets(in []Bucket) []Bucket {
	if isNormal(in) {
		return in
	}
	b := make([]Bucket, len(in))
	copy(b, in)
	sort.SliceStable(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound })
	out := b[:0]
	for _, bk := range b {
		if math.IsNaN(bk.UpperBound) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].UpperBound == bk.UpperBound {
			out[n-1].Count += bk.Count
			continue
		}
		out = append(out, bk)
	}
	for i := 1; i < len(out); i++ {
		if out[i].Count < out[i-1].Count {
			out[i].Count = out[i-1].Count
		}
	}
	return out
}

// SampleQuantile returns the q-quantile of raw samples with the maths of
// Prometheus quantile_over_time: rank q·(n−1), linear interpolation between
// the neighbouring order statistics. samples is sorted in place.
func SampleQuantile(q float64, samples []float64) float64 {
	n := len(samples)
	if n == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	if q < 0 {
		return math.Inf(-1)
	}
	if q > 1 {
		return math.Inf(1)
	}
	sort.Float64s(samples)
	rank := q * float64(n-1)
	lo := math.Floor(rank)
	hi := math.Ceil(rank)
	w := rank - lo
	return samples[int(lo)]*(1-w) + samples[int(hi)]*w
}

// bucketJSON writes le as a string, as Prometheus does, because JSON has
// no +Inf.
type bucketJSON struct {
	LE    string  `json:"le"`
	Count float64 `json:"count"`
}

// MarshalJSON writes {"le":"0.5","count":3}, with "+Inf" for the last bucket.
func (b Bucket) MarshalJSON() ([]byte, error) {
	return json.Marshal(bucketJSON{LE: strconv.FormatFloat(b.UpperBound, 'g', -1, 64), Count: b.Count})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *Bucket) UnmarshalJSON(data []byte) error {
	var j bucketJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	ub, err := strconv.ParseFloat(j.LE, 64)
	if err != nil {
		return fmt.Errorf("bucket le %q: %w", j.LE, err)
	}
	b.UpperBound, b.Count = ub, j.Count
	return nil
}

// isNormal reports whether normaliseBuckets would return in unchanged:
// bounds strictly increasing, none NaN, counts not decreasing.
func isNormal(in []Bucket) bool {
	for i, bk := range in {
		if math.IsNaN(bk.UpperBound) {
			return false
		}
		if i > 0 && (bk.UpperBound <= in[i-1].UpperBound || bk.Count < in[i-1].Count) {
			return false
		}
	}
	return true
}
