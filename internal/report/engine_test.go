package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// The engine diagnosis signals appear under their endpoint in the text
// report and, keyed with their units, in the JSON snapshot; estimated MBU
// is marked, measured MBU is not.
func TestEngineSignalsInReports(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := telemetry.NewStore(telemetry.StoreConfig{})
	src := "scrape:http://gpu-a:8000/metrics"
	sample := func(ep string, sig telemetry.Signal, v float64, approx bool) {
		s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: ep, Signal: sig, Value: v, At: t0,
			Source: src, Interval: 5 * time.Second, Approx: approx})
	}
	// Half the queue times are ≤ 10 ms, the lowest bucket: p50 is only
	// known to be ≤ 10 ms; the mean is the sum 1 s over 100.
	s.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, Endpoint: "a", Signal: telemetry.QueueTime, At: t0,
		Source: src, Interval: 5 * time.Second, Value: 1,
		Buckets: []telemetry.Bucket{{UpperBound: 0.01, Count: 50}, {UpperBound: 0.1, Count: 100}, {UpperBound: math.Inf(1), Count: 100}}})
	sample("a", telemetry.Preemptions, 0.25, false)
	sample("a", telemetry.PrefixCacheHit, 0.4, false)
	sample("a", telemetry.SpecAcceptLen, 2.2, false)
	sample("a", telemetry.MBU, 0.48, false)
	sample("b", telemetry.MBU, 0.31, true)
	snap := s.Snapshot(t0.Add(time.Second), time.Minute)
	var buf bytes.Buffer
	if err := Text(&buf, snap); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"a engine (server): queue ≤10.0/98.2ms (mean 10.0ms) · preemptions 0.25/s · prefix hit 40.0% · accept len 2.20tok/step", " 48.0%", "~31.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "engine (server)") != 1 {
		t.Errorf("engine line for an endpoint without engine signals:\n%s", out)
	}
	buf.Reset()
	if err := WriteJSON(&buf, Build(snap, nil)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints []struct {
			Name    string `json:"name"`
			Signals map[string]struct {
				P95MS      *float64 `json:"p95_ms"`
				PerS       *float64 `json:"value_per_s"`
				ValueRatio *float64 `json:"value_ratio"`
				Source     string   `json:"source"`
				Approx     bool     `json:"approx"`
			} `json:"signals"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	a := doc.Endpoints[0].Signals
	// Rank 95 of 100: 45 of the 50 in (10 ms, 100 ms].
	if q := a["queue_time_ms"]; q.P95MS == nil || math.Abs(*q.P95MS-(10+45.0/50*90)) > 1e-9 || q.Source != src {
		t.Errorf("queue_time_ms %+v", q)
	}
	if p := a["preemptions_per_s"]; p.PerS == nil || *p.PerS != 0.25 {
		t.Errorf("preemptions_per_s %+v", p)
	}
	// A ratio as a fraction, however the screen shows it (40.0%).
	if h := a["prefix_cache_hit_ratio"]; h.ValueRatio == nil || math.Abs(*h.ValueRatio-0.4) > 1e-12 {
		t.Errorf("prefix_cache_hit_ratio %+v", h)
	}
	if m := a["mbu"]; m.Approx || doc.Endpoints[1].Signals["mbu"].Approx != true {
		t.Errorf("MBU provenance: measured %+v, estimated %+v", m, doc.Endpoints[1].Signals["mbu"])
	}
}
