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

	"github.com/tokentop/tokentop/telemetry"
)

// handlerTransport answers requests with the fake's handler in the
// calling goroutine (no network, so that a synctest bubble's clock runs);
// while hang is set it answers nothing until the request's context ends,
// as a stopped store does.
type handlerTransport struct {
	f    *fakeProm
	hang *atomic.Bool
}

func (h handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.hang.Load() {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	w := httptest.NewRecorder()
	h.f.serve(w, r)
	return w.Result(), nil
}

// A store that stops answering: refreshes answered in milliseconds, so one
// in flight for a refresh interval reads as stale, saying so, with its
// figures stale too, well before the store finds the source silent (three
// intervals since its last report); a refresh that ends reports as usual,
// and no in-flight report follows it.
func TestRefreshInFlightReadsStale(t *testing.T) {
	f := newFakeProm(t, "llama") // outside the bubble: its server's goroutines wait on the network
	synctest.Test(t, func(t *testing.T) {
		s, rec := newTestSource(t, testConfig(f.URL()))
		hang := &atomic.Bool{}
		// Under the credentials and the body limit, as both API clients share them.
		s.http.Transport.(*authTransport).next.(*limitTransport).next = handlerTransport{f: f, hang: hang}
		store := telemetry.NewStore(telemetry.StoreConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- s.Run(ctx) }()
		settle := func() {
			synctest.Wait()
			for _, o := range rec.Take() {
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
		if st.State != telemetry.Stale || !strings.Contains(st.Err, "refresh in flight for 5s") || fig != telemetry.Stale {
			t.Errorf("refresh in flight %s: source %s %q, running %s; want stale, saying in flight for 5s", time.Since(began), st.State, st.Err, fig)
		}
		time.Sleep(5 * time.Second)
		settle()
		if st, _ := state(); st.State != telemetry.Stale || !strings.Contains(st.Err, "refresh in flight for 10s") {
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
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}
