package report

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/internal/schematest"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// A document with every kind of figure (probe and engine quantiles,
// ratios, rates, GPU power, the SLO's latency, ratio and burn-rate alerts,
// a diagnosis with evidence) matches docs/schema/ttftop-v1.schema.json;
// a field renamed back to a unitless name does not.
func TestDocumentMatchesSchema(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := telemetry.NewStore(telemetry.StoreConfig{})
	src := "scrape:http://gpu-a:8000/metrics"
	s.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, Endpoint: "a", At: t0,
		Info: &telemetry.Endpoint{Name: "a", Model: "m", Engine: telemetry.EngineVLLM, BaseURL: "http://gpu-a:8000"}})
	for i, v := range []float64{0.2, 0.25, 0.3} {
		s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "a", Signal: telemetry.TTFT, Value: v,
			At: t0.Add(time.Duration(i) * time.Second), Source: "probe:http://gpu-a:8000/v1/chat/completions"})
	}
	s.Observe(telemetry.Observation{Kind: telemetry.KindHistogram, Endpoint: "a", Signal: telemetry.QueueTime, At: t0,
		Source: src, Interval: 5 * time.Second, Value: 1,
		Buckets: []telemetry.Bucket{{UpperBound: 0.01, Count: 50}, {UpperBound: 0.1, Count: 100}, {UpperBound: math.Inf(1), Count: 100}}})
	for sig, v := range map[telemetry.Signal]float64{telemetry.KVCache: 0.42, telemetry.OutputTPS: 812, telemetry.Running: 7,
		telemetry.Preemptions: 0.25, telemetry.PrefixCacheHit: 0.4, telemetry.SpecAcceptLen: 2.2, telemetry.EngineReadBytes: 1.2e12,
		telemetry.GPUPower: 650, telemetry.LoRARunning: 2} {
		s.Observe(telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "a", Signal: sig, Value: v, At: t0, Source: src,
			Interval: 5 * time.Second, RateWindow: 30 * time.Second})
	}
	s.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: t0,
		Status: &telemetry.SourceStatus{Name: "scrape gpu-a", Kind: "scrape", URL: "http://gpu-a:8000/metrics", State: telemetry.Live, Latency: 3 * time.Millisecond}})
	now := t0.Add(3 * time.Second)
	remaining := 0.5
	latency := slo.Alert{Objective: "ttft-p95", Endpoint: "a", Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Firing,
		ActiveAt: t0, FiredAt: now, Value: 0.3, Threshold: 0.25, Peak: 0.3, Unit: "s", Data: telemetry.Live, Count: 3}
	burn := slo.Alert{Objective: "ttft-99pct", Endpoint: "a", Kind: slo.Ratio, Signal: telemetry.TTFT, State: slo.Inactive,
		Value: 2, Threshold: 14.4, Unit: "burn_rate", Data: telemetry.Live, BudgetRemaining: &remaining, BudgetSpan: time.Minute,
		BurnRates: []slo.BurnRate{{Window: 5 * time.Minute, Rate: 2, Factor: 14.4}}}
	errs := slo.Alert{Objective: "errors", Endpoint: "a", Kind: slo.ErrorRate, Signal: telemetry.ErrorRate, State: slo.NoDataState,
		Threshold: 0.01, Unit: "ratio", Data: telemetry.NoData}
	doc := Build(s.Snapshot(now, time.Minute), fakeAlerts{current: []slo.Alert{latency, burn, errs}, history: []slo.Alert{latency}})
	base := 90.0
	doc.Diagnosis = map[string]diagnosis.Diagnosis{"a": {Endpoint: "a", At: now,
		Causes: []diagnosis.Finding{{Cause: diagnosis.KVCache, Summary: "KV cache near full", Since: t0,
			Evidence: []diagnosis.Evidence{{Figure: "kv_cache", Stat: "value", Value: 97, Unit: "%", Baseline: &base, BaselineFrom: "ratio", Source: src}}}},
		Decomposition: diagnosis.Decomposition{ClientTTFTMs: &base, MBUPct: &base}}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	js := buf.String()
	schematest.Validate(t, "snapshot", buf.Bytes())
	for _, want := range []string{`"value_ratio": 0.42`, `"value_bytes_per_s": 1200000000000`, `"value_w": 650`, `"value_adapters": 2`,
		`"threshold_ms": 250`, `"value_burn_rate": 2`, `"budget_remaining_ratio": 0.5`, `"value_ratio": 0.97`, `"mbu_ratio": 0.9`} {
		if !strings.Contains(js, want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	// The schema catches a figure in display units or without its unit.
	for old, renamed := range map[string]string{`"value_ratio": 0.42`: `"value": 42`, `"threshold_ms"`: `"threshold"`,
		`"budget_remaining_ratio"`: `"budget_remaining"`, `"schema": "ttftop/v1"`: `"schema": "ttftop/v0"`} {
		if err := schematest.Check("snapshot", []byte(strings.Replace(js, old, renamed, 1))); err == nil {
			t.Errorf("the schema accepts %s in place of %s", renamed, old)
		}
	}
}
