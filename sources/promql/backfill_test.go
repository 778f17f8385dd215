package promql

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/ttftop/ttftop/telemetry"
)

// windowsOf returns the TTFT windows of an endpoint sorted by end.
func windowsOf(rec *recorder, ep string) []telemetry.Observation {
	hs := rec.find(telemetry.KindHistogram, ep, telemetry.TTFT)
	sort.Slice(hs, func(i, j int) bool { return hs[i].At.Before(hs[j].At) })
	return hs
}

// checkTiling fails unless the windows tile time without gap or overlap
// and each holds the fake's 4 observations a second.
func checkTiling(t *testing.T, hs []telemetry.Observation) {
	t.Helper()
	for i, h := range hs {
		if i > 0 && !h.At.Add(-h.Interval).Equal(hs[i-1].At) {
			t.Fatalf("window %d (%s, %s] does not follow the previous one ending %s", i, h.At.Add(-h.Interval), h.At, hs[i-1].At)
		}
		total := h.Buckets[len(h.Buckets)-1].Count
		if want := 4 * h.Interval.Seconds(); total != want {
			t.Fatalf("window %d over %s holds %v observations, want %v", i, h.Interval, total, want)
		}
	}
}

// historyRequests counts the TTFT range requests since the since'th that
// reach back before before.
func historyRequests(f *fakeProm, since int, before time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for i, form := range f.forms[since:] {
		start, err := strconv.ParseFloat(url.Values(form).Get("start"), 64)
		if err == nil && strings.Contains(f.queries[since+i], "time_to_first_token") && start < promTime(before) {
			n++
		}
	}
	return n
}

func TestHistoryFollowsTheViewedWindow(t *testing.T) {
	f := newFakeProm(t, "llama-8b")
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.WindowChanged(5 * time.Minute)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatalf("RefreshOnce: %v", err)
	}
	hs := windowsOf(rec, "llama-8b")
	checkTiling(t, hs)
	var live, hist int
	for _, h := range hs {
		if h.History {
			hist++
		} else {
			live++
		}
	}
	if live != 1 {
		t.Errorf("%d live windows, want 1 (the chain starts from a baseline; history does the rest)", live)
	}
	first := hs[0].At.Add(-hs[0].Interval)
	if span := hs[len(hs)-1].At.Sub(first); span < 5*time.Minute || span > 5*time.Minute+20*time.Second {
		t.Errorf("windows cover %s, want the 5m window (within two steps)", span)
	}
	if hist == 0 {
		t.Fatal("no history windows")
	}
	desc := rec.status(t).Description
	if !strings.Contains(desc, "history backfilled from") || !strings.Contains(desc, "live every 10s since") {
		t.Errorf("status %q does not say what is backfilled and what live", desc)
	}

	// Covered: the next refresh asks no history.
	n := len(f.forms)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := historyRequests(f, n, time.Now().Add(-time.Minute)); got != 0 {
		t.Errorf("%d history requests with the window covered, want 0", got)
	}

	// Widened: only the older part is fetched, and everything still tiles.
	n = len(f.forms)
	s.WindowChanged(time.Hour)
	select {
	case <-s.wake:
	default:
		t.Error("widening the window did not wake the source")
	}
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs = windowsOf(rec, "llama-8b")
	checkTiling(t, hs)
	if span := hs[len(hs)-1].At.Sub(hs[0].At.Add(-hs[0].Interval)); span < time.Hour {
		t.Errorf("after widening to 1h the windows cover %s", span)
	}
	if got := historyRequests(f, n, time.Now().Add(-10*time.Minute)); got == 0 {
		t.Error("no history request after widening")
	}
	// Narrowing does not wake or fetch.
	s.WindowChanged(time.Minute)
	select {
	case <-s.wake:
		t.Error("narrowing the window woke the source")
	default:
	}
}

func TestHistoryStepBounded(t *testing.T) {
	R := 15 * time.Second
	for _, c := range []struct {
		span   time.Duration
		series int
	}{{time.Hour, 10}, {time.Hour, 20_000}, {24 * time.Hour, 20_000}, {24 * time.Hour, 1}, {30 * 24 * time.Hour, 1}} {
		step := historyStep(c.span, R, c.series)
		steps := int(c.span / step)
		if step%R != 0 || step < R {
			t.Errorf("%s over %d series: step %s not a multiple of R", c.span, c.series, step)
		}
		if steps+1 > maxPointsPerSeries {
			t.Errorf("%s over %d series: %d points per series, Prometheus allows %d", c.span, c.series, steps+1, maxPointsPerSeries)
		}
		if steps*c.series > historyPointBudget && steps > minHistorySteps {
			t.Errorf("%s over %d series: %d points, budget %d", c.span, c.series, steps*c.series, historyPointBudget)
		}
	}
	if got := historyStep(time.Hour, R, 10); got != R {
		t.Errorf("a small fleet's 1h history step is %s, want R", got)
	}
}

func TestHistoryOfGoneEndpointsNotAnnounced(t *testing.T) {
	f := newFakeProm(t, "llama-8b")
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.WindowChanged(5 * time.Minute)
	// The history answer also holds a model gone before the chain began.
	f.set(func(f *fakeProm) {
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query_range") || r.Form.Get("step") == "10" {
				return false
			}
			start, end, step := parseRange(r)
			writeMatrix(w, rangeAnswer(q, []string{"llama-8b", "gone"}, nil), start, end, step, nil, nil)
			return true
		}
	})
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.find(telemetry.KindEndpoint, "gone", ""); len(got) != 0 {
		t.Errorf("an endpoint only in history was announced: %+v", got)
	}
	if hs := windowsOf(rec, "llama-8b"); len(hs) <= 3 {
		t.Errorf("%d windows: history missing", len(hs))
	}
}

func TestYoungSeriesMarked(t *testing.T) {
	f := newFakeProm(t, "old", "young")
	now := time.Now()
	f.set(func(f *fakeProm) { f.born = map[string]time.Time{"young": now.Add(-25 * time.Second)} })
	s, rec := newTestSource(t, testConfig(f.URL())) // rate window 1m
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	young := rec.find(telemetry.KindSample, "young", telemetry.OutputTPS)
	old := rec.find(telemetry.KindSample, "old", telemetry.OutputTPS)
	if len(young) != 1 || len(old) != 1 {
		t.Fatalf("tok/s samples: young %d, old %d", len(young), len(old))
	}
	if a := young[0].SeriesAge; a < 10*time.Second || a > 40*time.Second {
		t.Errorf("young series' tok/s has SeriesAge %s, want about 25s", a)
	}
	if old[0].SeriesAge != 0 {
		t.Errorf("old series' tok/s marked young (%s)", old[0].SeriesAge)
	}
	for _, o := range []telemetry.Observation{young[0], old[0]} {
		if o.RateWindow != time.Minute {
			t.Errorf("%s tok/s carries rate window %s, want the source's 1m", o.Endpoint, o.RateWindow)
		}
	}
	if r := rec.find(telemetry.KindSample, "young", telemetry.Running); len(r) != 1 || r[0].SeriesAge != 0 || r[0].RateWindow != 0 {
		t.Errorf("a gauge without a rate window marked young or given one: %+v", r)
	}
}

// Value signals' history ends before the first live value and, when the
// window widens, reaches further back without asking or emitting any
// point twice; the widening asks only for the older part.
func TestValueHistoryTilesWithoutOverlap(t *testing.T) {
	f := newFakeProm(t, "llama-8b")
	// 1s past a step: the live value, dated by the newest sample (2s old),
	// comes before the step the query was evaluated after.
	clk := &fakeClock{t: time.Unix(1_700_000_001, 0)}
	var ranges []v1.Range // range requests of the running gauge
	f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query_range") || !strings.Contains(q, "vllm:num_requests_running") {
				return false
			}
			start, end, step := parseRange(r)
			ranges = append(ranges, v1.Range{Start: start, End: end, Step: step})
			writeMatrix(w, []fakeSeries{{labels: map[string]string{"model_name": "llama-8b", "ttftop_engine": "vllm"}, value: 7}}, start, end, step, nil, nil)
			return true
		}
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.now = clk.Now
	history := func() (live time.Time, at []time.Time) {
		for _, o := range rec.find(telemetry.KindSample, "llama-8b", telemetry.Running) {
			switch {
			case !o.History && (live.IsZero() || o.At.Before(live)):
				live = o.At
			case o.History:
				if o.Value != 7 {
					t.Errorf("history value %v, want the range answer's 7", o.Value)
				}
				at = append(at, o.At)
			}
		}
		sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
		return live, at
	}
	s.WindowChanged(5 * time.Minute)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	live, first := history()
	if len(first) == 0 || !first[len(first)-1].Before(live) || live.Sub(first[0]) < 5*time.Minute-20*time.Second {
		t.Fatalf("history %v…%v (%d points), live from %s: want the 5m window before the live start", first[0], first[len(first)-1], len(first), live)
	}
	s.WindowChanged(10 * time.Minute)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, all := history()
	for i := 1; i < len(all); i++ {
		if !all[i].After(all[i-1]) {
			t.Fatalf("history point at %s emitted twice", all[i])
		}
	}
	if len(all) <= len(first) || live.Sub(all[0]) < 10*time.Minute-20*time.Second {
		t.Errorf("after widening to 10m history reaches %s back (%d points, %d before)", live.Sub(all[0]), len(all), len(first))
	}
	if last := ranges[len(ranges)-1]; !last.End.Before(first[0]) {
		t.Errorf("the widening asked up to %s, again over history held from %s", last.End, first[0])
	}
}

// A failed history query is a warning, never a failure of the live
// signal; it is asked again after DiscoveryInterval, and what it then
// brings is emitted once.
func TestHistoryFailureRetried(t *testing.T) {
	f := newFakeProm(t, "llama-8b")
	clk := &fakeClock{t: time.Unix(1_700_000_003, 0)}
	failing := true
	var running []time.Time // starts of the running gauge's history requests
	f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query_range") || !strings.Contains(q, "vllm:num_requests_running") {
				return false
			}
			start, end, step := parseRange(r)
			running = append(running, start)
			if failing {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"status":"error","errorType":"unavailable","error":"overloaded"}`))
				return true
			}
			writeMatrix(w, []fakeSeries{{labels: map[string]string{"model_name": "llama-8b", "ttftop_engine": "vllm"}, value: 7}}, start, end, step, nil, nil)
			return true
		}
	})
	cfg := testConfig(f.URL())
	cfg.DiscoveryInterval = time.Minute
	s, rec := newTestSource(t, cfg)
	s.now = clk.Now
	s.WindowChanged(5 * time.Minute)
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatalf("a failed history query failed the refresh: %v", err)
	}
	st := rec.status(t)
	if st.State != telemetry.Live || !strings.Contains(strings.Join(st.Warnings, "\n"), "running history (5m") {
		t.Fatalf("status %s, warnings %q: want live with a running history warning", st.State, st.Warnings)
	}
	count := func() (hist, live int) {
		for _, o := range rec.find(telemetry.KindSample, "llama-8b", telemetry.Running) {
			if o.History {
				hist++
			} else {
				live++
			}
		}
		return hist, live
	}
	if h, l := count(); h != 0 || l != 1 {
		t.Fatalf("after the failure: %d history points, %d live values", h, l)
	}
	failing = false
	clk.Add(10 * time.Second) // not due yet
	if err := s.RefreshOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(running) != 1 {
		t.Fatalf("history asked %d times within the discovery interval, want once", len(running))
	}
	clk.Add(time.Minute)
	for range 2 {
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(10 * time.Second)
	}
	// The window now begins 80s later; it is filled up to the first live
	// value: 5m − 80s at the 10s step.
	if h, _ := count(); len(running) != 2 || h < 21 || h > 24 {
		t.Errorf("after the retry: %d history requests, %d history points; want 2 requests and about 22 points", len(running), h)
	}
}
