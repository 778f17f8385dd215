package monitor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/slo/notify"
	"github.com/ttftop/ttftop/telemetry"
)

// firingMonitor has one TPOT objective that its data breaches.
func firingMonitor() *Monitor {
	m := New(Options{Objectives: []slo.Objective{{Name: "tpot", Kind: slo.Percentile, Signal: telemetry.TPOT,
		Percentile: 0.5, Threshold: 0.05, Window: time.Minute}}})
	m.Observe(telemetry.Observation{Kind: telemetry.KindSample, At: time.Now(), Endpoint: "ep", Signal: telemetry.TPOT,
		Value: 0.1, Source: "probe:x", Interval: time.Second})
	return m
}

func notifySource(m *Monitor) (telemetry.SourceStatus, bool) {
	for _, s := range m.Store.Snapshot(time.Now(), time.Minute).Sources {
		if s.Kind == "notify" {
			return s, true
		}
	}
	return telemetry.SourceStatus{}, false
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWebhookResentWhileFiringWithoutTransitions(t *testing.T) {
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { posts.Add(1) }))
	defer ts.Close()
	m := firingMonitor()
	nt, err := m.AddNotifications(config.Notify{Webhook: &config.Webhook{URL: ts.URL}},
		NotifyOptions{ResendTick: 5 * time.Millisecond, ResendEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if trs := m.EvaluateNow(); len(trs) != 1 || trs[0].To != slo.Firing {
		t.Fatalf("transitions %+v", trs)
	}
	// Only the first POST follows a transition; the rest are re-sends,
	// which Alertmanager needs to keep the alert from expiring.
	waitFor(t, "three posts", func() bool { return posts.Load() >= 3 })
	if err := nt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s, ok := notifySource(m); !ok || s.State != telemetry.Live || s.Name != "webhook "+ts.URL || s.LastOK.IsZero() {
		t.Errorf("notify source %+v", s)
	}
}

func TestUndeliveredNotificationsSaidAndReturned(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	m := firingMonitor()
	log := &syncbuf.Buffer{}
	nt, err := m.AddNotifications(config.Notify{Webhook: &config.Webhook{URL: ts.URL}},
		NotifyOptions{Log: log, Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.EvaluateNow()
	waitFor(t, "the give-up line", func() bool { return strings.Contains(log.String(), "gave up") })
	s, ok := notifySource(m)
	if !ok || s.State != telemetry.Error || s.Failures != 2 || s.Err != "HTTP 503 Service Unavailable: no (gave up after 2 attempts; 1 undelivered)" {
		t.Errorf("notify source %+v", s)
	}
	want := "ttftop: webhook " + ts.URL + " failing: HTTP 503 Service Unavailable: no (attempt 1 of 2, retrying in 1ms)\n" +
		"ttftop: webhook " + ts.URL + " failing: HTTP 503 Service Unavailable: no (gave up after 2 attempts; 1 undelivered)\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	err = nt.Shutdown(context.Background())
	if err == nil || err.Error() != "webhook "+ts.URL+": 1 of 1 notification undelivered (last error: HTTP 503 Service Unavailable: no)" {
		t.Errorf("shutdown: %v", err)
	}
}

// QA L4: `check --on-alert /bin/false` said "attempt 1 of 4", then "gave
// up after 3 attempts", then "still trying at exit: context deadline
// exceeded". Attempts count N of 4 throughout and the exit names the grace
// that cut them short. Fake time (synctest): the 1 s, 2 s backoffs pass
// without waiting.
func TestExitGraceCutShortSaidInAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := firingMonitor()
		log := &syncbuf.Buffer{}
		nt, err := m.AddNotifications(config.Notify{OnAlert: []string{"/bin/false"}}, NotifyOptions{Log: log})
		if err != nil {
			t.Fatal(err)
		}
		m.EvaluateNow()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = nt.Shutdown(ctx)
		want := "ttftop: on-alert /bin/false failing: exit status 1 (attempt 1 of 4, retrying in 1s)\n" +
			"ttftop: on-alert /bin/false failing: exit status 1 (gave up after attempt 3 of 4: the exit grace leaves no time for attempt 4; 1 undelivered)\n"
		if log.String() != want {
			t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
		}
		if err == nil || err.Error() != "on-alert /bin/false: 1 of 1 notification undelivered (last error: exit status 1); the 5s exit grace cut delivery short after attempt 3 of 4" {
			t.Errorf("shutdown: %v", err)
		}
	})
}

// Review: the notifiers shut down one after another under one deadline,
// and the second named what the first had left of the grace: "the 2s
// exit grace cut delivery short" when the grace was 5 s.
func TestExitGraceNamedAsGivenForEveryNotifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ds []deliverer
		for _, argv := range [][]string{{"/bin/false"}, {"false"}} {
			x, err := notify.NewExec(argv, notify.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			x.Notify(time.Now(), []slo.Transition{{From: slo.Pending, To: slo.Firing, At: time.Now(),
				Alert: slo.Alert{Objective: "tpot", Endpoint: "ep", State: slo.Firing}}})
			ds = append(ds, x)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// The first takes 3 s (attempts at 0, 1, 3 s), leaving 2 s.
		err := shutdownAll(ctx, ds)
		for _, name := range []string{"on-alert /bin/false", "on-alert false"} {
			want := name + ": 1 of 1 notification undelivered (last error: exit status 1); the 5s exit grace cut delivery short after attempt 3 of 4"
			if err == nil || !strings.Contains(err.Error()+"\n", want+"\n") {
				t.Errorf("shutdown:\n%v\nwant a line:\n%s", err, want)
			}
		}
	})
}
