package scrape

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// A real vLLM 0.27 page: its 6 queue times all sit in the lowest bucket
// (le="0.3", sum 0.119 ms). histogram_quantile would say p50 150 ms, p99
// 297 ms; the snapshot says p50…p99 ≤ 300 ms with the mean 0.0198 ms. Its
// prefill times spread over (0.5 s, 15 s]: interpolated, not bounds.
func TestCaptureQueueTimeIsOnlyABound(t *testing.T) {
	raw := readFixture(t, "vllm-v0.27-xpu-specdecode-mfu-metrics.txt")
	obs := scrapePages(t, Config{}, freshPage(raw), raw)
	store := telemetry.NewStore(telemetry.StoreConfig{})
	var last time.Time
	for _, o := range obs {
		store.Observe(o)
		last = o.At
	}
	ep := onlyEndpoint(t, obs)
	snap := store.Snapshot(last, time.Minute)
	queue := snap.Endpoints[0].Signals[telemetry.QueueTime]
	for _, p := range []int{50, 90, 95, 99} {
		if v, b := queue.Percentile(p); v == nil || *v != 300 || b != telemetry.BoundUpper {
			t.Errorf("%s queue p%d: %s %q, want ≤300ms", ep, p, shown(v), b)
		}
	}
	wantMean := 1000 * pageSum(t, raw, "vllm:request_queue_time_seconds_sum") / pageSum(t, raw, "vllm:request_queue_time_seconds_count")
	if queue.Mean == nil || math.Abs(*queue.Mean-wantMean) > 1e-9 || queue.Count != 6 {
		t.Errorf("queue mean %s over %v, want %v ms over 6", shown(queue.Mean), queue.Count, wantMean)
	}
	// Objectives keep Prometheus's maths: the interpolated 150 ms.
	if v, n := store.Quantile(ep, telemetry.QueueTime, 0.5, last, time.Minute); math.Abs(v-0.15) > 1e-12 || n != 6 {
		t.Errorf("queue p50 for objectives %v over %v, want histogram_quantile's 0.15 s", v, n)
	}
	prefill := snap.Endpoints[0].Signals[telemetry.PrefillTime]
	if prefill.P50 == nil || *prefill.P50 != 2500 || prefill.P50Bound != telemetry.NotBound || prefill.P99Bound != telemetry.NotBound {
		t.Errorf("prefill %+v: interpolated inside (2 s, 2.5 s] and (10 s, 15 s], not bounds", prefill)
	}
	js, err := json.Marshal(queue)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"p50":300`, `"p50_bound":"upper"`, `"p99_bound":"upper"`, `"mean":0.0198`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("queue JSON lacks %s: %s", want, js)
		}
	}
	if js, err = json.Marshal(prefill); err != nil || strings.Contains(string(js), "_bound") {
		t.Errorf("prefill JSON marks a bound (%v): %s", err, js)
	}
}

// shown prints a snapshot figure: its value, or "nil".
func shown(v *float64) string {
	if v == nil {
		return "nil"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}
