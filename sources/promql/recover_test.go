package promql

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// After a store recovers, a signal whose query answers is no longer in
// error, even before a new histogram window arrives (one comes a step and
// the store's lag later: VictoriaMetrics restarted with a 90s
// -search.latencyOffset has none for a minute and a half). It reads as old
// as its last window, not as the timeout of an earlier refresh (QA round
// 5: TTFT ERROR "query timed out" for 10-70s under a source "ok").
func TestRecoveredStoreClearsEarlierErrors(t *testing.T) {
	f := newFakeProm(t, "llama")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	store := telemetry.NewStore(telemetry.StoreConfig{})
	windows := 0 // live TTFT windows since the last check (not history)
	refresh := func(wantErr bool) {
		t.Helper()
		err := s.RefreshOnce(context.Background())
		if (err != nil) != wantErr {
			t.Fatalf("refresh at %d: error %v, want error: %v", clk.Now().Unix(), err, wantErr)
		}
		for _, o := range rec.Take() {
			if o.Kind == telemetry.KindHistogram && o.Signal == telemetry.TTFT && !o.History {
				windows++
			}
			store.Observe(o)
		}
	}
	for range 8 {
		refresh(false)
		clk.Add(5 * time.Second)
	}
	ttft := func() telemetry.SignalSnapshot {
		out, _ := store.Signal("llama", telemetry.TTFT, clk.Now(), time.Minute)
		return out
	}
	if got := ttft(); got.State != telemetry.Live {
		t.Fatalf("TTFT before the failure: %s %q, want live", got.State, got.Err)
	}

	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, _ *http.Request, _ string) bool {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, err := w.Write([]byte(`{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`))
			return err == nil
		}
	})
	refresh(true)
	if got := ttft(); got.State != telemetry.Error || got.Err == "" {
		t.Fatalf("TTFT in the failing refresh: %s %q, want the error", got.State, got.Err)
	}

	f.set(func(f *fakeProm) { f.hook, f.lag = nil, 90*time.Second })
	windows = 0
	for range 3 {
		clk.Add(5 * time.Second)
		refresh(false)
		got := ttft()
		if got.State == telemetry.Error || got.Err != "" || got.P50 == nil {
			t.Errorf("TTFT at %d, the store answering again: %s %q (p50 %v), want no error, the last window's figures", clk.Now().Unix(), got.State, got.Err, got.P50)
		}
		if st := sourceState(store, clk.Now()); st == telemetry.Error {
			t.Errorf("source at %d: %s, want it answering", clk.Now().Unix(), st)
		}
	}
	if windows != 0 {
		t.Errorf("%d TTFT windows from a store 90s behind: the case tested is the one without a new window", windows)
	}
}

// sourceState is the state of the store's only source at now.
func sourceState(store *telemetry.Store, now time.Time) telemetry.State {
	srcs := store.Snapshot(now, time.Minute).Sources
	if len(srcs) != 1 {
		return telemetry.Unknown
	}
	return srcs[0].State
}
