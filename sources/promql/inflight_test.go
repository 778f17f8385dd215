package promql

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// handlerTransport answers requests with the fake's handler in the
// calling goroutine (no network, so that a synctest bubble's clock runs);
// while hang is set it answers nothing until the request's context ends,
// as a stopped store does.
type handlerTransport struct {
	f     *fakeProm
	hang  *atomic.Bool
	delay *atomic.Int64 // each answer takes this long (time.Duration)
}

func (h handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.hang.Load() {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	time.Sleep(time.Duration(h.delay.Load()))
	w := httptest.NewRecorder()
	h.f.serve(w, r)
	return w.Result(), nil
}

// A store that stops answering: refreshes answered in milliseconds, so one
// in flight for a refresh interval reads as stale, saying so, with its
// figures stale too, well before the store finds the source silent (three
// intervals since its last report); a refresh that ends reports as usual,
// and no in-flight report follows it. A slow store that keeps answering
// (a refresh of several seconds, each query 2s) is not hung.
func TestRefreshInFlightReadsStale(t *testing.T) {
	f := newFakeProm(t, "llama") // outside the bubble: its server's goroutines wait on the network
	synctest.Test(t, func(t *testing.T) {
		s, rec := newTestSource(t, testConfig(f.URL()))
		hang, delay := &atomic.Bool{}, &atomic.Int64{}
		// Under the credentials and the body limit, as both API clients share them.
		s.http.Transport.(*authTransport).next.(*limitTransport).next = handlerTransport{f: f, hang: hang, delay: delay}
		store := telemetry.NewStore(telemetry.StoreConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()
		var stale []telemetry.Observation // stale reports while the store answers slowly
		settle := func() {
			synctest.Wait()
			for _, o := range rec.Take() {
				if o.Kind == telemetry.KindSource && o.Status.State == telemetry.Stale && delay.Load() > 0 {
					stale = append(stale, o)
				}
				store.Observe(o)
			}
		}
		settle()
		state := func() (telemetry.SourceStatus, telemetry.State) {
			now := time.Now()
			srcs := store.Snapshot(now, time.Minute).Sources
			if len(srcs) != 1 {
				t.Fatalf("%d sources, want 1", len(srcs))
			}
			running, _ := store.Signal("llama", telemetry.Running, now, time.Minute)
			return srcs[0], running.State
		}
		if st, fig := state(); st.State != telemetry.Live || fig != telemetry.Live {
			t.Fatalf("answering store: source %s %q, running %s; want live", st.State, st.Err, fig)
		}

		hang.Store(true)
		began := time.Now().Add(5 * time.Second) // the next refresh
		time.Sleep(9 * time.Second)
		settle()
		if st, fig := state(); st.State != telemetry.Live || fig != telemetry.Live {
			t.Errorf("refresh in flight 4s: source %s %q, running %s; want still live", st.State, st.Err, fig)
		}
		time.Sleep(1*time.Second + time.Millisecond)
		settle()
		st, fig := state()
		if st.State != telemetry.Stale || !strings.Contains(st.Err, "no answer for 5s (refresh in flight for 5s") || fig != telemetry.Stale {
			t.Errorf("refresh in flight %s: source %s %q, running %s; want stale, saying in flight for 5s", time.Since(began), st.State, st.Err, fig)
		}
		time.Sleep(5 * time.Second)
		settle()
		if st, _ := state(); st.State != telemetry.Stale || !strings.Contains(st.Err, "no answer for 10s (refresh in flight for 10s") {
			t.Errorf("refresh in flight 10s: source %s %q; want it counting", st.State, st.Err)
		}

		// The queries time out (10s); the refresh reports its failures, and
		// then the store answers again.
		hang.Store(false)
		time.Sleep(10 * time.Second)
		settle()
		if st, _ := state(); st.State == telemetry.Stale {
			t.Errorf("after the refresh ended: source %s %q; want its own report", st.State, st.Err)
		}
		time.Sleep(30 * time.Second)
		settle()
		if st, fig := state(); st.State != telemetry.Live || fig != telemetry.Live {
			t.Errorf("store answering again: source %s %q, running %s; want live", st.State, st.Err, fig)
		}

		delay.Store(int64(2 * time.Second))
		time.Sleep(time.Minute)
		settle()
		slowest := time.Duration(0)
		for _, st := range store.Snapshot(time.Now(), time.Minute).Sources {
			slowest = max(slowest, st.Latency)
		}
		if slowest < 6*time.Second {
			t.Fatalf("refreshes took %s: not the case tested (a refresh longer than the interval)", slowest)
		}
		for _, o := range stale {
			t.Errorf("a store answering slowly read as hung: %q", o.Status.Err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
