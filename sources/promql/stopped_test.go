package promql

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// refreshFrozen runs refreshes every 5s for 20s on a fake clock; freeze
// sets, per refresh, the fake store's lags for the time elapsed since the
// first one. It returns the last refresh's observations.
func refreshFrozen(t *testing.T, freeze func(f *fakeProm, elapsed time.Duration)) *recorder {
	t.Helper()
	f := newFakeProm(t, "a", "b")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0))
	for elapsed := time.Duration(0); elapsed <= 20*time.Second; elapsed += 5 * time.Second {
		f.set(func(f *fakeProm) { freeze(f, elapsed) })
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	return rec
}

// An endpoint whose newest sample stands still while the others' move on
// (a dead target the store keeps answering with its last sample) has
// stopped: its values are no data dated by that sample, with a refresh's
// interval, so that they turn stale; the other endpoint is untouched.
func TestFrozenEndpointHasStopped(t *testing.T) {
	rec := refreshFrozen(t, func(f *fakeProm, elapsed time.Duration) {
		f.lags = map[string]time.Duration{"b": elapsed}
	})
	newest := time.Unix(1_000_003-2, 0) // the fake's newest sample is 2s old
	nd := rec.find(telemetry.KindNoData, "b", telemetry.OutputTPS)
	if len(nd) != 1 || !nd[0].At.Equal(newest) || nd[0].Interval != 5*time.Second {
		t.Errorf("frozen endpoint's output tok/s: no data %+v, want one dated %s with a 5s interval", nd, newest)
	}
	if got := rec.find(telemetry.KindSample, "b", telemetry.OutputTPS); len(got) != 0 {
		t.Errorf("frozen endpoint's output tok/s: samples %+v, want none", got)
	}
	if got := rec.find(telemetry.KindSample, "a", telemetry.OutputTPS); len(got) != 1 || got[0].Interval != 5*time.Second {
		t.Errorf("moving endpoint's output tok/s: %+v, want one sample", got)
	}
	// Its distributions too, every refresh, not only once a histogram
	// step has ended; the moving endpoint's never.
	if nd := rec.find(telemetry.KindNoData, "b", telemetry.TTFT); len(nd) == 0 || !nd[len(nd)-1].At.Equal(newest) {
		t.Errorf("frozen endpoint's TTFT: no data %+v, want one dated %s", nd, newest)
	}
	if nd := rec.find(telemetry.KindNoData, "a", telemetry.TTFT); len(nd) != 0 {
		t.Errorf("moving endpoint's TTFT: no data %+v, want none", nd)
	}
	if w := strings.Join(rec.status(t).Warnings, "\n"); !strings.Contains(w, "1 endpoint stopped, target down") || !strings.Contains(w, "newest sample of b ") {
		t.Errorf("warnings %q: want the stopped replica said, in the singular", w)
	}
}

// A store that stalls as a whole (every endpoint's newest sample stands
// still) is late, not dead: its figures stay values, the lag allowed for.
func TestStalledStoreHasNotStopped(t *testing.T) {
	rec := refreshFrozen(t, func(f *fakeProm, elapsed time.Duration) { f.lag = elapsed })
	for _, name := range []string{"a", "b"} {
		got := rec.find(telemetry.KindSample, name, telemetry.OutputTPS)
		if len(got) != 1 || got[0].Interval < 20*time.Second {
			t.Errorf("%s in a stalled store: output tok/s %+v, want one sample with the lag allowed for", name, got)
		}
	}
}

// An endpoint that stopped and then moves on again (a restarted engine)
// has its rates marked young from its return, since a rate over [W] spans
// the gap and reads low; the endpoint that never stopped is not marked.
func TestRestartedEndpointReadsYoung(t *testing.T) {
	f := newFakeProm(t, "a", "b")
	s, rec, clk := clockedSource(t, f, time.Unix(1_000_003, 0).Add(250*time.Millisecond)) // Prometheus: milliseconds (young.go)
	refresh := func(models ...string) {
		t.Helper()
		f.set(func(f *fakeProm) { f.models = models })
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	refresh("a", "b")
	refresh("a") // b stopped
	refresh("a", "b")
	got := rec.find(telemetry.KindSample, "b", telemetry.OutputTPS)
	if len(got) != 1 || got[0].SeriesAge <= 0 || got[0].SeriesAge >= time.Minute {
		t.Fatalf("restarted endpoint's output tok/s %+v: want it marked young (a series age under the 1m window)", got)
	}
	if a := rec.find(telemetry.KindSample, "a", telemetry.OutputTPS); len(a) != 1 || a[0].SeriesAge != 0 {
		t.Errorf("the endpoint that never stopped: %+v, want no series age", a)
	}
}

// On VictoriaMetrics (instant answers at whole seconds) rate() over a
// series younger than [W] is its true rate (QA round 5, finding 7), but a
// restarted one's is afreshRate's: the counter's new count over the whole
// W while a sample of its life before is in [W]. So the same restart is
// young there too at first, and no longer once the life before has left
// [W], while on Prometheus it stays young until the restart is W old.
func TestRestartedEndpointYoungOnVictoriaMetricsWhileTheLifeBeforeIsInW(t *testing.T) {
	for _, tc := range []struct {
		store string
		start time.Time
		late  bool // still young once the life before has left [W]
	}{
		{"VictoriaMetrics", time.Unix(1_000_003, 0), false}, // whole seconds
		{"Prometheus", time.Unix(1_000_003, 0).Add(250 * time.Millisecond), true},
	} {
		t.Run(tc.store, func(t *testing.T) {
			f := newFakeProm(t, "a", "b")
			s, rec, clk := clockedSource(t, f, tc.start)
			refresh := func(models ...string) time.Duration {
				t.Helper()
				f.set(func(f *fakeProm) { f.models = models })
				rec.Reset()
				if err := s.RefreshOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				clk.Add(5 * time.Second)
				got := rec.find(telemetry.KindSample, "b", telemetry.OutputTPS)
				if len(models) == 2 && len(got) != 1 {
					t.Fatalf("b's output tok/s %+v, want one sample", got)
				}
				if len(got) == 0 {
					return 0
				}
				return got[0].SeriesAge
			}
			refresh("a", "b") // b's newest sample: start − 2s
			refresh("a")      // b stopped
			if age := refresh("a", "b"); age <= 0 {
				t.Errorf("%s: restarted endpoint's output tok/s not young (series age %s): its afresh rate divides by W", tc.store, age)
			}
			// 52s after the return: the life before (start − 2s) has left
			// the 1m window, the restart (start + 8s) has not.
			clk.Add(45 * time.Second)
			if age := refresh("a", "b"); (age > 0) != tc.late {
				t.Errorf("%s: once the life before left [W], series age %s; want young %v", tc.store, age, tc.late)
			}
		})
	}
}

func TestRateKindNeedsEvidence(t *testing.T) {
	var k rateKind
	at := time.Unix(1_000_000, 0)
	for i := range wholeSecondEvidence {
		if !k.dividesByWindow() {
			t.Fatalf("VictoriaMetrics after %d whole-second evaluations, want %d", i, wholeSecondEvidence)
		}
		k.observe(at.Add(time.Duration(i) * time.Second))
	}
	if k.dividesByWindow() {
		t.Fatal("whole-second evaluations only: want VictoriaMetrics' rate")
	}
	k.observe(at.Add(1500 * time.Millisecond))
	if !k.dividesByWindow() {
		t.Error("an evaluation with milliseconds: Prometheus' engine, want its rate")
	}
}

// One refresh's answers are evaluated concurrently, often in the same
// millisecond: equal whole-second times are one chance of Prometheus
// landing on a whole second, not evidence of VictoriaMetrics.
func TestRateKindCountsDistinctWholeSeconds(t *testing.T) {
	var k rateKind
	at := time.Unix(1_000_000, 0)
	for range wholeSecondEvidence + 2 {
		k.observe(at)
	}
	if !k.dividesByWindow() {
		t.Fatal("one whole-second evaluation time, seen many times: want Prometheus' rate still")
	}
	k.observe(at.Add(time.Second))
	k.observe(at.Add(2 * time.Second))
	if k.dividesByWindow() {
		t.Error("three distinct whole-second evaluation times: want VictoriaMetrics' rate")
	}
}

// A replica that stopped before the source first saw it (killed before
// ttftop started) is in no freshness answer while its model's other
// replica is, yet its rate over [W] still answers from its older samples:
// it has stopped all the same, its rates are no data, and its model row
// sums only the live replica, saying so; once it returns, the row is the
// server's again and the label is taken off.
func TestReplicaStoppedBeforeFirstSeen(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	pf := newPodFleet(t, clk, []string{"llama-a"}, func(q string, live []string) []fakeSeries {
		if !strings.Contains(q, "vllm:generation_tokens_total") {
			return nil
		}
		// Rates answer for both pods, the dead one's from older samples.
		return []fakeSeries{podSeries("llama-a", 100), podSeries("llama-b", 50),
			{labels: map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}, value: 150}}
	})
	s, rec := newTestSource(t, testConfig(pf.f.URL()))
	s.now = clk.Now
	refresh := refreshThenStep(t, s, rec, clk)
	counted := func() (string, bool) {
		var label string
		found := false
		for _, o := range rec.find(telemetry.KindEndpoint, "llama", "") {
			label, found = o.Info.Labels[countedLabel], true
		}
		return label, found
	}
	refresh()
	if got := rec.find(telemetry.KindSample, "llama-b/llama", telemetry.OutputTPS); len(got) != 0 {
		t.Errorf("never-seen replica's output tok/s %+v: want no sample", got)
	}
	if nd := rec.find(telemetry.KindNoData, "llama-b/llama", telemetry.OutputTPS); len(nd) != 1 {
		t.Errorf("never-seen replica's output tok/s: no data %+v, want one", nd)
	}
	if got := rec.find(telemetry.KindSample, "llama", telemetry.OutputTPS); len(got) != 1 || got[0].Value != 100 {
		t.Errorf("model row's output tok/s %+v, want 100: the live replica's, not the server's 150", got)
	}
	if label, _ := counted(); label != "1 of 2 replicas: 1 stopped, left out of its summed figures" {
		t.Errorf("model row's %s label %q", countedLabel, label)
	}
	w := strings.Join(rec.status(t).Warnings, "\n")
	if !strings.Contains(w, "1 replica stopped, target down or gone") || !strings.Contains(w, "llama-b/llama has had no sample since ttftop started") {
		t.Errorf("warnings %q: want the stopped replica named", w)
	}
	if strings.ContainsAny(w, "()") {
		t.Errorf("warnings %q: brackets, which the header's bracketed, cut sources line leaves unbalanced", w)
	}

	pf.setLive("llama-a", "llama-b") // it returns
	refresh()
	if got := rec.find(telemetry.KindSample, "llama", telemetry.OutputTPS); len(got) != 1 || got[0].Value != 150 {
		t.Errorf("model row's output tok/s after the replica returned %+v, want the server's 150", got)
	}
	if label, found := counted(); !found || label != "" {
		t.Errorf("model row's %s label after the replica returned: %q (announced %v), want taken off", countedLabel, label, found)
	}
}

// A stopped endpoint's distribution signals keep one state: every no data
// of theirs, each refresh's and each newly ended histogram step's, is
// dated by its newest sample. One dated by the step would make them fresh
// again for a step, and its objectives flip between unknown (stale) and
// no data every histogram step (QA: "unknown since" reset every 15s).
func TestStoppedEndpointNoDataDatedByNewestSample(t *testing.T) {
	f := newFakeProm(t, "a", "b")
	start := time.Unix(1_000_003, 0)
	s, rec, clk := clockedSource(t, f, start)
	refresh := func() {
		t.Helper()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
	refresh()
	newest := clk.Now().Add(-5*time.Second - 2*time.Second) // b's newest sample: 2s before its last refresh
	f.set(func(f *fakeProm) { f.models = []string{"a"} })   // b stopped
	rec.Reset()
	for range 8 { // 40s: four 10s histogram steps end
		refresh()
	}
	nd := rec.find(telemetry.KindNoData, "b", telemetry.TTFT)
	if len(nd) < 8 {
		t.Fatalf("stopped endpoint's TTFT: %d no data, want at least one a refresh", len(nd))
	}
	for _, o := range nd {
		if o.At.After(newest) || o.Interval != s.cfg.Refresh {
			t.Errorf("stopped endpoint's TTFT no data at %s (interval %s): want dated by its newest sample %s, with a refresh's interval %s",
				o.At, o.Interval, newest, s.cfg.Refresh)
		}
	}
}

// A replica never in a freshness answer (and of which the store has no
// up series) is GONE MaxLag after it was found, once its rates over [W]
// of its older samples have ended, and retired once gone for the viewed
// window; before that it stays, stopped, then listed as gone.
func TestNeverSeenReplicaRetired(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	var mu sync.Mutex
	deadAnswers := true
	pf := newPodFleet(t, clk, []string{"llama-a"}, func(q string, live []string) []fakeSeries {
		if !strings.Contains(q, "vllm:generation_tokens_total") {
			return nil
		}
		ss := []fakeSeries{podSeries("llama-a", 100)}
		mu.Lock()
		defer mu.Unlock()
		if deadAnswers {
			ss = append(ss, podSeries("llama-b", 50))
		}
		return ss
	})
	cfg := testConfig(pf.f.URL())
	cfg.MaxLag = time.Minute
	s, rec := newTestSource(t, cfg)
	s.now = clk.Now
	refresh := func(after time.Duration) {
		t.Helper()
		clk.Add(after)
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	refresh(0)
	mu.Lock()
	deadAnswers = false // its rate window has passed
	mu.Unlock()
	refresh(30 * time.Second)
	if got := rec.find(telemetry.KindRetire, "", ""); len(got) != 0 {
		t.Fatalf("retired before MaxLag: %+v", got)
	}
	refresh(time.Minute)
	if got := rec.find(telemetry.KindRetire, "", ""); len(got) != 0 {
		t.Fatalf("retired as soon as gone: %+v", got)
	}
	checkGone(t, rec, "llama-b/llama")
	refresh(time.Minute + time.Second)
	if got := rec.find(telemetry.KindRetire, "", ""); len(got) != 1 || got[0].Endpoint != "llama-b/llama" {
		t.Fatalf("retired %+v, want llama-b/llama", got)
	}
	if got := rec.find(telemetry.KindNoData, "llama-b/llama", ""); len(got) != 0 {
		t.Errorf("retired replica still reported: %+v", got)
	}
}

// A model row whose replicas have all stopped takes their state for its
// distributions too, from the first refresh that finds them stopped: its
// histogram windows end with theirs, and the windows it already has must
// not read live while the replica's row says no data (QA: a lone
// replica's model row, the only row shown for it, read TTFT live for 21s
// after the replica was killed). The model row of a live replica stays
// live.
func TestModelRowOfStoppedReplicasNotLive(t *testing.T) {
	// Stopped at each phase of the 15s histogram step: the row's windows
	// end up to a step before its no data otherwise would.
	for _, phase := range []time.Duration{0, 5 * time.Second, 10 * time.Second} {
		t.Run(phase.String(), func(t *testing.T) { checkModelRowOfStoppedReplicas(t, phase) })
	}
}

func checkModelRowOfStoppedReplicas(t *testing.T, phase time.Duration) {
	f := newFakeProm(t, "a", "b")
	f.set(func(f *fakeProm) { f.instances = map[string]string{"a": "host-a:8000", "b": "host-b:8000"} })
	clk := &fakeClock{t: time.Unix(1_000_003, 0).Add(phase)}
	f.set(func(f *fakeProm) { f.clock = clk.Now })
	figures := telemetry.NewStore(telemetry.DefaultStoreConfig())
	cfg := testConfig(f.URL())
	cfg.HistogramStep, cfg.Delay, cfg.Refresh = 15*time.Second, 5*time.Second, 5*time.Second // the defaults QA ran
	s, err := New(cfg, telemetry.SinkFunc(figures.Observe))
	if err != nil {
		t.Fatal(err)
	}
	s.now = clk.Now
	refresh := func() {
		t.Helper()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	state := func(name string, sig telemetry.Signal) telemetry.State {
		snap, _ := figures.Signal(name, sig, clk.Now(), time.Minute)
		return snap.State
	}
	for range 12 { // 60s: histogram windows for both models
		refresh()
		clk.Add(5 * time.Second)
	}
	for _, name := range []string{"a", "b"} {
		if st := state(name, telemetry.TTFT); st != telemetry.Live {
			t.Fatalf("model row %s's TTFT %s before the stop, want live", name, st)
		}
	}
	f.set(func(f *fakeProm) { f.models = []string{"a"} }) // b's only replica stopped
	for i := range 4 {
		refresh()
		row, replica := state("b", telemetry.TTFT), state("host-b:8000/b", telemetry.TTFT)
		if row == telemetry.Live || replica == telemetry.Live || row != replica {
			t.Errorf("refresh %d after the stop: model row b's TTFT %s, its replica's %s: want the replica's state, no data or stale", i+1, row, replica)
		}
		if st := state("a", telemetry.TTFT); st != telemetry.Live {
			t.Errorf("refresh %d after the stop: the live model row a's TTFT %s, want live", i+1, st)
		}
		clk.Add(5 * time.Second)
	}
}

// A model row has stopped only once all its replicas have: one replica
// that stopped while the other lags (its newest samples 20s old, yet
// moving on) leaves the row's newest sample standing still behind the
// stopped one's for 20s, which must not pass for a frozen row: its
// figures are the lagging replica's, never no data (nor, then, its
// distributions: stoppedDistributions).
func TestModelRowWithALaggingReplicaNotStopped(t *testing.T) {
	clk := &fakeClock{t: time.Unix(2_000_000, 0)}
	var mu sync.Mutex
	live := map[string]bool{"llama-a": true, "llama-b": true}
	f := newFakeProm(t)
	series := func(pod, model string, v float64) fakeSeries {
		return fakeSeries{labels: map[string]string{"model_name": model, "pod": pod, "instance": pod + ":8000", "ttftop_engine": "vllm"}, value: v}
	}
	f.set(func(f *fakeProm) {
		f.clock = clk.Now
		f.hook = func(w http.ResponseWriter, r *http.Request, q string) bool {
			if !strings.HasSuffix(r.URL.Path, "/query") {
				return false
			}
			mu.Lock()
			a, b := live["llama-a"], live["llama-b"]
			mu.Unlock()
			now := clk.Now()
			ts := func(age time.Duration) float64 { return float64(now.Add(-age).UnixMilli()) / 1000 }
			var ss []fakeSeries
			switch {
			case strings.Contains(q, "timestamp("):
				ss = append(ss, series("other-x", "other", ts(2*time.Second)))
				if a {
					ss = append(ss, series("llama-a", "llama", ts(22*time.Second))) // lags 20s behind the others
				}
				if b {
					ss = append(ss, series("llama-b", "llama", ts(2*time.Second)))
				}
			case strings.Contains(q, "vllm:num_requests_running"):
				ss = append(ss, series("other-x", "other", 5), series("llama-a", "llama", 1),
					fakeSeries{labels: map[string]string{"model_name": "llama", "ttftop_engine": "vllm"}, value: 1})
			}
			writeVector(w, now, ss, nil, nil)
			return true
		}
	})
	s, rec := newTestSource(t, testConfig(f.URL()))
	s.now = clk.Now
	refresh := refreshThenStep(t, s, rec, clk)
	for range 3 {
		refresh()
	}
	mu.Lock()
	live["llama-b"] = false
	mu.Unlock()
	for i := range 6 { // 30s: the lagging replica's newest passes the stopped one's after 20s
		refresh()
		if got := rec.find(telemetry.KindSample, "llama", telemetry.Running); len(got) != 1 || got[0].Value != 1 {
			t.Errorf("refresh %d after llama-b stopped: model row's running %+v, no data %+v; want the lagging live replica's 1",
				i+1, got, rec.find(telemetry.KindNoData, "llama", telemetry.Running))
		}
		if nd := rec.find(telemetry.KindNoData, "llama-a/llama", telemetry.Running); len(nd) != 0 {
			t.Errorf("refresh %d: the lagging replica's running no data %+v: it has not stopped", i+1, nd)
		}
	}
}

// refreshThenStep returns a refresh that forgets what was recorded, runs
// one refresh (failing the test on its error) and moves the clock on by
// the default 5s refresh interval.
func refreshThenStep(t *testing.T, s *Source, rec *recorder, clk *fakeClock) func() {
	return func() {
		t.Helper()
		rec.Reset()
		if err := s.RefreshOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Second)
	}
}
