package promql

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// An endpoint whose TPOT was derived (no per-request TPOT histogram in the
// window) is labelled so; once its engine's own histogram arrives (an
// engine upgraded in place), the label is taken off and the endpoint
// announced again, so that its real TPOT is not called derived for ever.
func TestDerivedLabelClearedByOwnHistogram(t *testing.T) {
	f := newFakeProm(t, "a")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	var own atomic.Bool
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			tpot := strings.Contains(q, "vllm:request_time_per_output_token_seconds_bucket")
			switch {
			case strings.HasSuffix(r.URL.Path, "/query") && strings.Contains(q, derivedTag) && !own.Load():
				writeVector(w, clk.Now(), []fakeSeries{{labels: map[string]string{"model_name": "a", "ttftop_engine": "vllm",
					derivedTag: "itl_mean"}, value: 0.012}}, nil, nil)
				return true
			case strings.HasSuffix(r.URL.Path, "/query_range") && tpot && own.Load():
				start, end, step := parseRange(r)
				q = strings.ReplaceAll(q, "vllm:request_time_per_output_token_seconds_bucket", "vllm:time_to_first_token_seconds_bucket")
				writeMatrix(w, rangeAnswer(q, []string{"a"}, nil), start, end, step, nil, nil)
				return true
			}
			return false
		}
	})
	figures := telemetry.NewStore(telemetry.DefaultStoreConfig())
	label := func() (string, bool) {
		t.Helper()
		for _, o := range rec.All() {
			figures.Observe(o)
		}
		rec.Reset()
		for _, e := range figures.Snapshot(clk.Now(), time.Minute).Endpoints {
			if e.Name == "a" {
				note, ok := e.Labels["tpot_derived"]
				return note, ok
			}
		}
		t.Fatal("endpoint a not in the store")
		return "", false
	}
	refresh := func() {
		t.Helper()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(10 * time.Second)
	}
	refresh()
	if got := rec.find(telemetry.KindSample, "a", telemetry.TPOT); len(got) != 1 || !got[0].Approx {
		t.Fatalf("derived TPOT %+v: want one approximate value", got)
	}
	if note, ok := label(); !ok || !strings.Contains(note, "derived") {
		t.Fatalf("derived TPOT: label %q (%v), want the derivation's note", note, ok)
	}
	own.Store(true)
	for range 3 { // a baseline step, then windows
		refresh()
	}
	if h := rec.find(telemetry.KindHistogram, "a", telemetry.TPOT); len(h) == 0 {
		t.Fatal("no TPOT window from the engine's own histogram")
	}
	if note, ok := label(); ok {
		t.Errorf("TPOT from the engine's histogram still labelled derived: %q", note)
	}
}
