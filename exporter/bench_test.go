package exporter

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// realisticProbe is a 64-token reply: 63 inter-token gaps.
func realisticProbe() telemetry.ProbeRecord {
	itl := make([]float64, 63)
	for i := range itl {
		itl[i] = 15 + float64(i%7)
	}
	return okProbe(180, 16, 1200, 64, itl...)
}

// BenchmarkObserveProbe is the ingest cost of one finished probe record
// (4 histograms, 63 ITL gaps, counters) across 100 endpoints.
func BenchmarkObserveProbe(b *testing.B) {
	e := New(Options{})
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("ep-%03d", i)
	}
	obs := make([]telemetry.Observation, len(names))
	for i, n := range names {
		obs[i] = probeObs(n, time.Unix(1_700_000_000, 0), realisticProbe())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		e.Observe(obs[i%len(obs)])
	}
}

// BenchmarkObserveIgnored is the cost of an observation the exporter does
// not use (samples, live text): what every other observation costs.
func BenchmarkObserveIgnored(b *testing.B) {
	e := New(Options{})
	o := telemetry.Observation{Kind: telemetry.KindSample, Endpoint: "ep", Source: src, Signal: telemetry.ITL, Value: 0.015}
	b.ReportAllocs()
	for b.Loop() {
		e.Observe(o)
	}
}

// BenchmarkScrape100 is one /metrics scrape with 100 probed endpoints.
func BenchmarkScrape100(b *testing.B) {
	e := New(Options{})
	for i := 0; i < 100; i++ {
		e.Observe(probeObs(fmt.Sprintf("ep-%03d", i), time.Unix(1_700_000_000, 0), realisticProbe()))
	}
	h := e.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
