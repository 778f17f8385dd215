package telemetry

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func inf() float64 { return math.Inf(1) }

// Expected values worked by hand with Prometheus' bucketQuantile rules.
func TestHistogramQuantileByHand(t *testing.T) {
	b := []Bucket{{0.1, 10}, {0.5, 30}, {1, 40}, {inf(), 50}}
	cases := []struct {
		q, want float64
	}{
		{0.1, 0.05}, // rank 5 in [0,0.1]: 0.1·5/10
		{0.5, 0.4},  // rank 25: 0.1 + 0.4·(15/20)
		{0.8, 1.0},  // rank 40 = top of le=1
		{0.99, 1.0}, // rank 49.5 in +Inf: highest finite bound
		{0.0, 0.0},  // rank 0 in the first bucket
		{0.95, 1.0}, // +Inf again
		{0.7, 0.75}, // rank 35 in (0.5,1]: 0.5 + 0.5·(5/10)
	}
	for _, c := range cases {
		if got := HistogramQuantile(c.q, b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("q=%v: got %v want %v", c.q, got, c.want)
		}
	}
}

func TestHistogramQuantileEdgeCases(t *testing.T) {
	if v := HistogramQuantile(0.5, []Bucket{{1, 1}, {2, 2}}); !math.IsNaN(v) {
		t.Errorf("missing +Inf: got %v, want NaN", v)
	}
	if v := HistogramQuantile(0.5, []Bucket{{inf(), 5}}); !math.IsNaN(v) {
		t.Errorf("single bucket: got %v, want NaN", v)
	}
	if v := HistogramQuantile(0.5, []Bucket{{1, 0}, {inf(), 0}}); !math.IsNaN(v) {
		t.Errorf("no observations: got %v, want NaN (no data, never 0)", v)
	}
	if v := HistogramQuantile(-1, []Bucket{{1, 1}, {inf(), 1}}); !math.IsInf(v, -1) {
		t.Errorf("q<0: got %v", v)
	}
	if v := HistogramQuantile(2, []Bucket{{1, 1}, {inf(), 1}}); !math.IsInf(v, 1) {
		t.Errorf("q>1: got %v", v)
	}
	// Unsorted input, a duplicate bound (le="5" and le="5.0" from two
	// series) and a non-monotonic count are normalised as Prometheus does.
	messy := []Bucket{{inf(), 20}, {5, 4}, {1, 2}, {5, 6}, {2, 1}}
	// merged: 1:2, 2:1→2 (monotonic), 5:10, +Inf:20; q=.5 rank 10 → 5
	if v := HistogramQuantile(0.5, messy); v != 5 {
		t.Errorf("messy: got %v want 5", v)
	}
	if messy[0].UpperBound != inf() {
		t.Errorf("input was modified")
	}
	// Negative lowest bound: answered with that bound.
	if v := HistogramQuantile(0.1, []Bucket{{-1, 5}, {inf(), 10}}); v != -1 {
		t.Errorf("negative first bound: got %v", v)
	}
}

func TestCountAtOrBelow(t *testing.T) {
	b := []Bucket{{0.1, 10}, {0.5, 30}, {1, 40}, {inf(), 50}}
	if c, tot, exact := CountAtOrBelow(0.5, b); c != 30 || tot != 50 || !exact {
		t.Errorf("edge: %v %v %v", c, tot, exact)
	}
	if c, _, exact := CountAtOrBelow(0.3, b); math.Abs(c-20) > 1e-9 || exact {
		t.Errorf("interpolated: %v %v", c, exact)
	}
	if c, _, exact := CountAtOrBelow(5, b); c != 40 || exact {
		t.Errorf("beyond finite: %v %v", c, exact)
	}
}

func TestSampleQuantile(t *testing.T) {
	// quantile_over_time maths: rank q·(n−1)
	cases := []struct {
		q    float64
		in   []float64
		want float64
	}{
		{0.5, []float64{4, 1, 3, 2}, 2.5},
		{0.9, []float64{1, 2, 3, 4}, 3.7},
		{0.99, []float64{7}, 7},
		{1, []float64{1, 9, 5}, 9},
	}
	for _, c := range cases {
		if got := SampleQuantile(c.q, c.in); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SampleQuantile(%v, …) = %v, want %v", c.q, got, c.want)
		}
	}
	if !math.IsNaN(SampleQuantile(0.5, nil)) {
		t.Error("empty: want NaN")
	}
}

func TestBucketJSONRoundTripWithInf(t *testing.T) {
	in := Observation{Kind: KindHistogram, Buckets: []Bucket{{0.5, 2}, {inf(), 3}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"le":"+Inf","count":3}`) {
		t.Errorf("json: %s", b)
	}
	var out Observation
	if err := json.Unmarshal(b, &out); err != nil || !math.IsInf(out.Buckets[1].UpperBound, 1) || out.Buckets[0] != in.Buckets[0] {
		t.Errorf("round trip: %+v %v", out, err)
	}
}

// A scrape can catch a lower bucket after a higher one was read, leaving a
// count that decreases; Prometheus forces the counts monotonic before
// interpolating, and so must we, or the answer moves.
func TestHistogramQuantileRepairsNonMonotonicCounts(t *testing.T) {
	b := []Bucket{{1, 10}, {2, 8}, {4, 20}, {inf(), 20}}
	// repaired 1:10, 2:10, 4:20; q=.75 rank 15 in (2,4]: 2 + 2·(5/10) = 3.
	// Unrepaired the bucket would hold 12 from 8 and give 2 + 2·(7/12).
	if v := HistogramQuantile(0.75, b); math.Abs(v-3) > 1e-12 {
		t.Errorf("non-monotonic counts: got %v want 3", v)
	}
}

// le="5" and le="5.0" are the same bound from two series: their counts add
// into one bucket before the rank is searched.
func TestHistogramQuantileMergesEqualBounds(t *testing.T) {
	b := []Bucket{{1, 10}, {5, 20}, {5.0, 20}, {inf(), 40}}
	// merged 1:10, 5:40, +Inf:40; q=.5 rank 20 in (1,5]: 1 + 4·(10/30).
	// Unmerged the rank would stop at the first le=5 (count 20) and give 5.
	want := 1 + 4.0*10/30
	if v := HistogramQuantile(0.5, b); math.Abs(v-want) > 1e-12 {
		t.Errorf("equal bounds: got %v want %v", v, want)
	}
	if c, total, exact := CountAtOrBelow(5, b); c != 40 || total != 40 || !exact {
		t.Errorf("CountAtOrBelow(5) on equal bounds = %v of %v (exact %v), want 40 of 40 exact", c, total, exact)
	}
}

// Every observation in the lowest bucket (vLLM's le="0.3" queue time):
// histogram_quantile interpolates from an assumed 0 (p50 150 ms, p95
// 285 ms); what is known is only "≤ 300 ms". All in +Inf: "≥ the highest
// finite bound". A rank between two finite edges is not a bound.
func TestHistogramQuantileBound(t *testing.T) {
	allFirst := []Bucket{{0.3, 184}, {0.5, 184}, {0.8, 184}, {inf(), 184}}
	allInf := []Bucket{{0.3, 0}, {0.5, 0}, {7680, 0}, {inf(), 6}}
	inside := []Bucket{{0.1, 10}, {0.5, 30}, {1, 40}, {inf(), 50}}
	cases := []struct {
		name      string
		b         []Bucket
		q         float64
		prom      float64 // HistogramQuantile: Prometheus's answer
		shown     float64
		wantBound Bound
	}{
		{"all in first, p50", allFirst, 0.5, 0.15, 0.3, BoundUpper},
		{"all in first, p95", allFirst, 0.95, 0.285, 0.3, BoundUpper},
		{"all in first, p99", allFirst, 0.99, 0.297, 0.3, BoundUpper},
		{"all in +Inf, p50", allInf, 0.5, 7680, 7680, BoundLower},
		{"all in +Inf, p99", allInf, 0.99, 7680, 7680, BoundLower},
		{"first of several, p10", inside, 0.1, 0.05, 0.1, BoundUpper},
		{"inside, p50", inside, 0.5, 0.4, 0.4, NotBound},
		{"top of le=1, p80", inside, 0.8, 1, 1, NotBound},
		{"+Inf of several, p99", inside, 0.99, 1, 1, BoundLower},
		{"non-positive lowest bound", []Bucket{{-1, 5}, {inf(), 10}}, 0.1, -1, -1, BoundUpper},
	}
	for _, c := range cases {
		if got := HistogramQuantile(c.q, c.b); math.Abs(got-c.prom) > 1e-12 {
			t.Errorf("%s: HistogramQuantile %v, want Prometheus's %v", c.name, got, c.prom)
		}
		v, b := HistogramQuantileBound(c.q, c.b)
		if math.Abs(v-c.shown) > 1e-12 || b != c.wantBound {
			t.Errorf("%s: shown %v %q, want %v %q", c.name, v, b, c.shown, c.wantBound)
		}
	}
	if v, b := HistogramQuantileBound(0.5, []Bucket{{1, 0}, {inf(), 0}}); !math.IsNaN(v) || b != NotBound {
		t.Errorf("no observations: %v %q", v, b)
	}
}
