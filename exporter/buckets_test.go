package exporter

import (
	"math"
	"os"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestBucketsMatchRealVLLM pins the exporter's histogram bounds to those of
// a real vLLM /metrics page (testdata/PROVENANCE.md), both the tables and
// what a scrape serves: comparing a table with itself would let a changed
// bound pass.
func TestBucketsMatchRealVLLM(t *testing.T) {
	f, err := os.Open("testdata/vllm-v0.27-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	vllm, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse the vLLM capture: %v", err)
	}

	e := New(Options{})
	e.Observe(probeObs("ep", time.Unix(1_700_000_000, 0), okProbe(100, 10, 200, 3, 10, 10)))
	served := scrape(t, e.Handler())

	for _, c := range []struct {
		vllm, ours string
		table      []float64
	}{
		{"vllm:time_to_first_token_seconds", "ttftop_probe_ttft_seconds", TTFTBuckets()},
		{"vllm:time_to_first_token_seconds", "ttftop_probe_ttfa_seconds", TTFTBuckets()},
		{"vllm:request_time_per_output_token_seconds", "ttftop_probe_tpot_seconds", ITLBuckets()},
		{"vllm:inter_token_latency_seconds", "ttftop_probe_itl_seconds", ITLBuckets()},
		{"vllm:e2e_request_latency_seconds", "ttftop_probe_e2e_seconds", E2EBuckets()},
	} {
		want := familyBounds(t, vllm[c.vllm])
		if len(want) < 10 {
			t.Fatalf("%s: %d bounds in the capture", c.vllm, len(want))
		}
		if !slices.Equal(c.table, want) {
			t.Errorf("%s table\n got %v\nwant %v (vLLM's)", c.ours, c.table, want)
		}
		if got := familyBounds(t, served[c.ours]); !slices.Equal(got, want) {
			t.Errorf("%s served\n got %v\nwant %v (vLLM's)", c.ours, got, want)
		}
	}
}

// familyBounds returns the finite upper bounds of a histogram family, the
// same in every series of it (checked), in order.
func familyBounds(t *testing.T, f *dto.MetricFamily) []float64 {
	t.Helper()
	if f == nil || len(f.GetMetric()) == 0 {
		t.Fatal("histogram family missing")
	}
	var first []float64
	for i, m := range f.GetMetric() {
		var bs []float64
		for _, b := range m.GetHistogram().GetBucket() {
			if !math.IsInf(b.GetUpperBound(), 1) {
				bs = append(bs, b.GetUpperBound())
			}
		}
		if i == 0 {
			first = bs
		} else if !slices.Equal(bs, first) {
			t.Errorf("%s: series %d has bounds %v, series 0 %v", f.GetName(), i, bs, first)
		}
	}
	return first
}
