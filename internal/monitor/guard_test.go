package monitor

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// A source loop that panics does not end the process: the panic is an
// error status naming where it happened, the other sources keep running,
// and after restartDelay the loop runs again and the crash report is
// withdrawn.
func TestPanickingSourceIsReportedAndRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := New(Options{})
		var runs, other atomic.Int32
		m.add("promql:http://store", func(ctx context.Context) error {
			if n := runs.Add(1); n == 1 {
				var rounds []int
				rounds[n]++ // a bug: index out of range
			}
			<-ctx.Done()
			return nil
		})
		m.add("scrape:http://engine", func(ctx context.Context) error {
			other.Add(1)
			<-ctx.Done()
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		stopped := false
		defer func() {
			if !stopped { // a failed check: end the loops all the same
				cancel()
				<-done
			}
		}()
		synctest.Wait()

		status := func() (telemetry.SourceStatus, bool) {
			for _, st := range m.Store.Snapshot(time.Now(), time.Minute).Sources {
				if st.Name == "promql:http://store" {
					return st, true
				}
			}
			return telemetry.SourceStatus{}, false
		}
		st, ok := status()
		if !ok || st.State != telemetry.Error || !strings.Contains(st.Err, "internal error") ||
			!strings.Contains(st.Err, "index out of range [1] with length 0") || !strings.Contains(st.Err, "guard_test.go:") {
			t.Fatalf("after the panic: status %+v (present %v), want an internal error naming the panic and its line", st, ok)
		}
		if other.Load() != 1 {
			t.Fatalf("the other source ran %d times, want once and still running", other.Load())
		}
		time.Sleep(restartDelay)
		synctest.Wait()
		if runs.Load() != 2 {
			t.Fatalf("the panicked loop ran %d times after %s, want restarted once", runs.Load(), restartDelay)
		}
		if st, ok := status(); ok {
			t.Fatalf("after the restart the crash report is still shown: %+v", st)
		}
		cancel()
		stopped = true
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}
