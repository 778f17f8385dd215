package monitor

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

var rt0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// liveAt is what the live engine showed right after one evaluation.
type liveAt struct {
	at                       time.Time // of the evaluation
	alerts, history, current []slo.Alert
	badges                   map[string]slo.Badge
}

// recordLive runs a monitor on a synthetic clock for n seconds, as live
// does (observations, then an evaluation every second), recording to a
// new file, and returns what the engine showed after each evaluation.
// Endpoint a breaches its TTFT objective in episodes; endpoint b too, and
// goes silent for a minute (its data goes stale: unknown, no data).
func recordLive(t *testing.T, n int) (string, map[int]liveAt, []slo.Objective) {
	t.Helper()
	now := rt0
	objs := []slo.Objective{
		{Name: "ttft-p95", Kind: slo.Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 1, Window: 20 * time.Second,
			For: 10 * time.Second, KeepFiringFor: 5 * time.Second},
		{Name: "ttft-ratio", Kind: slo.Ratio, Signal: telemetry.TTFT, Threshold: 1, Target: 0.9, Period: 28 * 24 * time.Hour},
	}
	// The store keeps 2 minutes, so a replay reads 2 to 5 minutes before
	// a seek point and must take older alert state from the recording's
	// segment preambles.
	store := telemetry.DefaultStoreConfig()
	store.MaxWindow = 2 * time.Minute
	m := New(Options{Objectives: objs, SLO: slo.Options{Scale: 40320, History: 2}, Store: store, Now: func() time.Time { return now }})
	path := filepath.Join(t.TempDir(), "live.jsonl.gz")
	if err := m.AddRecorder(path); err != nil {
		t.Fatal(err)
	}
	if err := m.RecordView(time.Minute, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	slow := func(s int, ep string) bool {
		if ep == "a" {
			return s%150 >= 60 && s%150 < 100
		}
		return s%200 >= 30 && s%200 < 70
	}
	live := map[int]liveAt{}
	for s := 0; s < n; s++ {
		now = rt0.Add(time.Duration(s) * time.Second)
		for _, ep := range []string{"a", "b"} {
			if ep == "b" && s >= 300 && s < 360 {
				continue // silent
			}
			v := 0.2
			if slow(s, ep) {
				v = 3
			}
			m.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: now, Endpoint: ep,
				Signal: telemetry.TTFT, Source: "probe:http://" + ep, Value: v, Interval: time.Second})
		}
		// Live evaluates on its own ticker, which drifts against the
		// observations: a replay that judged again would not land on
		// the same instants.
		now = now.Add(time.Duration(100+(s*7919)%800) * time.Millisecond)
		m.EvaluateNow()
		live[s] = liveAt{at: now, alerts: m.SLO.Alerts(), history: m.SLO.History(), current: m.SLO.Current(),
			badges: map[string]slo.Badge{"a": m.SLO.Badge("a", now), "b": m.SLO.Badge("b", now)}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ctx); err != nil { // no sources: closes the recording
		t.Fatal(err)
	}
	return path, live, m.SLO.Objectives()
}

// stateOf is what must match live: which alert, and its state and times.
func stateOf(as []slo.Alert) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = fmt.Sprintf("%s/%s/%s %s active %s fired %s resolved %s unknown %s", a.Objective, a.Endpoint, a.Severity, a.State,
			a.ActiveAt.Format(time.TimeOnly), a.FiredAt.Format(time.TimeOnly), a.ResolvedAt.Format(time.TimeOnly), a.UnknownSince.Format(time.TimeOnly))
	}
	return out
}

func sameStates(t *testing.T, what string, got, want []slo.Alert) {
	t.Helper()
	g, w := stateOf(got), stateOf(want)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %q\nwant %q", what, g, w)
	}
}

// TestReplayShowsWhatLiveShowed: at any time, by a seek (forwards,
// backwards, far from the start) or `--json --at`, the replay's alerts,
// alert history and every objective × endpoint state are live's, and its
// objectives are the ones live judged (not scaled twice).
func TestReplayShowsWhatLiveShowed(t *testing.T) {
	path, live, liveObjs := recordLive(t, 660)
	settings, ok, err := record.ReadSettings(path)
	if err != nil || !ok {
		t.Fatalf("settings: %v %v", ok, err)
	}
	if settings.View == nil || settings.View.Window != time.Minute || settings.View.Refresh != 2*time.Second {
		t.Errorf("view settings %+v", settings.View)
	}
	j := RecordedJudging(settings)
	if got := slo.New(j.Objectives, nil, j.SLO).Objectives(); !reflect.DeepEqual(got, liveObjs) {
		t.Fatalf("replay judges\n%+v\nlive judged\n%+v", got, liveObjs)
	}
	var episodes int
	for _, l := range live {
		episodes = max(episodes, len(l.history))
	}
	if episodes < 3 {
		t.Fatalf("the scenario has too few alert episodes (%d) to test anything", episodes)
	}

	r, err := NewReplay(path, 1, j)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	// Seeks in an order that jumps back and forth across segments; the
	// times include some just after transitions.
	for _, s := range []int{75, 612, 101, 333, 64, 401, 359, 200, 659, 5} {
		want := live[s]
		at := want.at
		if err := r.Player().Seek(at); err != nil {
			t.Fatal(err)
		}
		sameStates(t, fmt.Sprintf("Alerts after a seek to +%ds", s), r.Alerts(), want.alerts)

		st, err := ReplayAt(path, at, time.Minute, j)
		if err != nil {
			t.Fatal(err)
		}
		sameStates(t, fmt.Sprintf("ReplayAt +%ds: history", s), st.History, want.history)
		sameStates(t, fmt.Sprintf("ReplayAt +%ds: every objective × endpoint", s), st.Alerts, want.current)
		for _, ep := range []string{"a", "b"} {
			if got, w := r.Badge(ep, at), want.badges[ep]; got != w {
				t.Errorf("+%ds: badge of %s %s, live %s", s, ep, got, w)
			}
		}
	}
}
