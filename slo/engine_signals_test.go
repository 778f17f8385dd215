package slo

import (
	"math"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// An objective on an engine diagnosis signal: queue time p95 ≤ 200 ms,
// judged from the engine's queue-time histogram (scrape or PromQL).
func TestQueueTimeObjective(t *testing.T) {
	thr, err := ParseThreshold(telemetry.QueueTime, "200ms")
	if err != nil || thr != 0.2 {
		t.Fatalf("threshold %v, %v", thr, err)
	}
	obj := Objective{Name: "queue-p95", Kind: Percentile, Signal: telemetry.QueueTime, Percentile: 0.95,
		Threshold: thr, Window: time.Minute}
	store := telemetry.NewStore(telemetry.StoreConfig{})
	eng := New([]Objective{obj}, store, Options{})
	now := epoch()
	o := telemetry.Observation{Kind: telemetry.KindHistogram, At: now, Endpoint: "ep", Signal: telemetry.QueueTime,
		Source: "scrape:http://ep/metrics", Interval: 5 * time.Second, Value: 30,
		// 50 requests ≤ 0.1 s, 40 more ≤ 0.3 s, 10 more ≤ 1 s.
		Buckets: []telemetry.Bucket{{UpperBound: 0.1, Count: 50}, {UpperBound: 0.3, Count: 90}, {UpperBound: 1, Count: 100},
			{UpperBound: math.Inf(1), Count: 100}}}
	store.Observe(o)
	eng.Observe(o)
	res := eng.Check(now)
	if len(res) != 1 || !res[0].Measured {
		t.Fatalf("results %+v", res)
	}
	// Rank 95 of 100 lies halfway through the (0.3, 1] bucket.
	if want := 0.3 + (95.0-90)/(100-90)*0.7; math.Abs(*res[0].Value-want) > 1e-9 || res[0].Pass || res[0].Count != 100 {
		t.Errorf("queue p95 %v (pass %v, n %v), want %v failing", *res[0].Value, res[0].Pass, res[0].Count, want)
	}
}
