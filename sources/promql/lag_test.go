package promql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// runLagging refreshes a source against a lagging fake every 5s for span,
// on a fake clock, and returns the recorder.
func runLagging(t *testing.T, f *fakeProm, span time.Duration) (*recorder, *Source) {
	t.Helper()
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	for elapsed := time.Duration(0); elapsed <= span; elapsed += 5 * time.Second {
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatalf("refresh at +%s: %v", elapsed, err)
		}
		clk.Add(5 * time.Second)
	}
	return rec, s
}

// checkTiled checks that an endpoint's windows follow each other step
// apart from the first to the last, each with the fake's 40 observations,
// and that the last one is recent for a store lagging by lag.
func checkTiled(t *testing.T, rec *recorder, s *Source, name string, lag time.Duration) {
	t.Helper()
	const step = 10 * time.Second
	hs := rec.find(telemetry.KindHistogram, name, telemetry.TTFT)
	if len(hs) < 10 {
		t.Fatalf("%s: %d TTFT windows over 3 minutes, want about 18", name, len(hs))
	}
	for i, h := range hs {
		if n := h.Buckets[len(h.Buckets)-1].Count; n != 40 {
			t.Errorf("%s: window ending %d holds %v observations, want 40", name, h.At.Unix(), n)
		}
		if i > 0 && h.At.Sub(hs[i-1].At) != step {
			t.Errorf("%s: windows ending %d and %d do not tile: a window was lost", name, hs[i-1].At.Unix(), h.At.Unix())
		}
		if h.Interval < lag {
			t.Errorf("%s: window interval %s; want the lag (%s) allowed for, or the figures turn stale", name, h.Interval, lag)
		}
	}
	// The clock ended at 1_000_003 + span + 5s.
	now := s.now()
	if age := now.Sub(hs[len(hs)-1].At); age > lag+2*time.Second+2*step {
		t.Errorf("%s: newest window %s old with the store %s behind; want at most lag + a sample + two steps", name, age, lag)
	}
	if nd := rec.find(telemetry.KindNoData, name, telemetry.TTFT); len(nd) != 0 {
		t.Errorf("%s: %d no-data observations for TTFT while the store only lagged", name, len(nd))
	}
}

// A store that lags 30s (VictoriaMetrics' default -search.latencyOffset):
// recent range points are missing or repeat an older value. No window is
// lost or emptied, and the status says the data is delayed.
func TestLaggingStoreLosesNoWindows(t *testing.T) {
	for _, fill := range []bool{false, true} {
		t.Run(fmt.Sprintf("fill=%v", fill), func(t *testing.T) {
			f := newFakeProm(t, "llama")
			f.set(func(f *fakeProm) { f.lag, f.fillLagged = 30*time.Second, fill })
			rec, s := runLagging(t, f, 3*time.Minute)
			checkTiled(t, rec, s, "llama", 30*time.Second)
			st := rec.status(t)
			if st.State != telemetry.Live || len(st.Warnings) == 0 || !strings.Contains(st.Warnings[0], "lagging 32s behind") ||
				!strings.HasPrefix(st.Description, "lagging 32s behind") {
				t.Errorf("status %+v; want live, first warning and description saying lagging 32s behind", st)
			}
		})
	}
}

// One endpoint lags more than the others: its steps wait and are fetched
// again once the store has them; the other endpoint is not held back.
func TestLaggingEndpointCatchesUp(t *testing.T) {
	f := newFakeProm(t, "fast", "slow")
	f.set(func(f *fakeProm) {
		f.lags = map[string]time.Duration{"slow": 40 * time.Second}
		f.fillLagged = true
	})
	rec, s := runLagging(t, f, 3*time.Minute)
	checkTiled(t, rec, s, "fast", 0)
	checkTiled(t, rec, s, "slow", 40*time.Second)
	fast := rec.find(telemetry.KindHistogram, "fast", telemetry.TTFT)
	if age := s.now().Sub(fast[len(fast)-1].At); age > 2*time.Second+20*time.Second {
		t.Errorf("fast endpoint's newest window is %s old: held back by the slow one", age)
	}
	if w := strings.Join(rec.status(t).Warnings, "\n"); !strings.Contains(w, "1 endpoints behind the others: the newest sample of slow is 42s old") {
		t.Errorf("warnings %q do not name the endpoint that lags", w)
	}
}

// An endpoint that disappears from the store is no data at once, not
// waited for.
func TestVanishedEndpointIsNoData(t *testing.T) {
	f := newFakeProm(t, "a", "b")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.set(func(f *fakeProm) { f.models = []string{"a"} })
	rec.Reset()
	clk.Add(10 * time.Second)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The step's no data, and the stopped endpoint's (stoppedDistributions),
	// both dated by its newest sample: a step's date would make the
	// figure fresh again for a step (TestStoppedEndpointNoDataDatedByNewestSample).
	nd := rec.find(telemetry.KindNoData, "b", telemetry.TTFT)
	if len(nd) != 2 || !nd[0].At.Equal(time.Unix(1_000_001, 0)) || !nd[1].At.Equal(time.Unix(1_000_001, 0)) {
		t.Errorf("vanished endpoint: no-data %+v, want the step's and the refresh's, both at its newest sample 1000001", nd)
	}
	if hs := rec.find(telemetry.KindHistogram, "a", telemetry.TTFT); len(hs) != 1 {
		t.Errorf("remaining endpoint: %d windows, want 1", len(hs))
	}
}

// A store that answers with nothing at all is not "ok".
func TestEmptyStoreIsNoData(t *testing.T) {
	f := newFakeProm(t)
	s, rec := newTestSource(t, testConfig(f.URL()))
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := rec.status(t)
	if st.State != telemetry.NoData || len(st.Warnings) == 0 || !strings.Contains(st.Warnings[0], "no recent samples") {
		t.Errorf("status %+v, want no data with a warning", st)
	}
}

// VictoriaMetrics dates instant answers in whole seconds: up to a second
// before the request was even sent. That is not clock skew.
func TestClockOffsetAllowsWholeSecondTimestamps(t *testing.T) {
	sent := time.Unix(1_000_000, 830_000_000)
	received := sent.Add(20 * time.Millisecond)
	var c clockOffset
	c.observe(time.Unix(1_000_000, 0), sent, received)
	if c.d != 0 {
		t.Errorf("whole-second timestamp 0.83s before the request: offset %s, want 0", c.d)
	}
	// The same gap with millisecond precision is a real offset.
	c.observe(time.Unix(1_000_000, 1_000_000), sent, received)
	if c.d > -800*time.Millisecond || c.d < -850*time.Millisecond {
		t.Errorf("millisecond timestamp 0.83s before the request: offset %s, want about -0.84s", c.d)
	}
	c.observe(time.Unix(1_003_600, 0), sent, received)
	if c.d < time.Hour-2*time.Second || c.d > time.Hour {
		t.Errorf("server an hour ahead: offset %s", c.d)
	}
}
