package telemetry

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// Every figure's numbers are written in the signal's JSON unit, named in
// the key, and read back into display units: what a Go caller reading
// ttftop's JSON gets is what the views show.
func TestSignalMapJSONRoundTrip(t *testing.T) {
	s := NewStore(StoreConfig{})
	for i, v := range []float64{0.2, 0.3, 0.4} {
		s.Observe(sample("e", TTFT, v, t0.Add(time.Duration(i)*time.Second)))
	}
	s.Observe(Observation{Kind: KindSample, Endpoint: "e", Signal: KVCache, Value: 0.25, At: t0, Source: "scrape:u",
		Interval: time.Second})
	s.Observe(Observation{Kind: KindSample, Endpoint: "e", Signal: EngineReadBytes, Value: 1.5e12, At: t0, Source: "scrape:u",
		Interval: time.Second, RateWindow: 10 * time.Second, SeriesAge: 3 * time.Second})
	want := s.Snapshot(t0.Add(3*time.Second), time.Minute).Endpoints[0].Signals
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["kv_cache"]["value_ratio"] != 0.25 || raw["engine_read_bytes_per_s"]["value_bytes_per_s"] != 1.5e12 ||
		raw["engine_read_bytes_per_s"]["rate_window_ms"] != 10000.0 || raw["engine_read_bytes_per_s"]["series_age_ms"] != 3000.0 || math.Abs(raw["ttft"]["p50_ms"].(float64)-300) > 1e-3 || raw["ttft"]["observations"] != 3.0 {
		t.Errorf("JSON %s", b)
	}
	var got SignalMap
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for sig, w := range want {
		g := got[sig]
		g.ObservedAt, g.DataSince = g.ObservedAt.In(w.ObservedAt.Location()), g.DataSince.In(w.DataSince.Location())
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: read back %+v, want %+v", sig, g, w)
		}
	}
}
