package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

func epoch() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

func firing(name, endpoint string) slo.Transition {
	at := epoch()
	a := slo.Alert{Objective: name, Endpoint: endpoint, Kind: slo.Percentile, Signal: telemetry.TTFT, State: slo.Firing,
		ActiveAt: at.Add(-time.Minute), FiredAt: at, Value: 7.25, Threshold: 5, Peak: 7.25, Severity: "warning",
		Description: "TTFT p95 ≤ 5s over 5m", Data: telemetry.Live}
	return slo.Transition{At: at, From: slo.Pending, To: slo.Firing, Alert: a, Bell: true}
}

func resolved(tr slo.Transition, at time.Time) slo.Transition {
	a := tr.Alert
	a.State, a.ResolvedAt, a.Value = slo.Resolved, at, 1
	return slo.Transition{At: at, From: slo.Firing, To: slo.Resolved, Alert: a}
}

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func shutdown(t *testing.T, s interface{ Shutdown(context.Context) error }) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

func TestExecPassesHostileTextLiterally(t *testing.T) {
	dir := t.TempDir()
	hook := script(t, `out="$1"
cat > "$out/stdin.json"
printf '%s\n' "$@" > "$out/args"
printf '%s' "$TTFTOP_ALERT_OBJECTIVE" > "$out/env"
`)
	hostile := "ttft $(rm -rf /) `touch " + dir + "/pwned1`; touch " + dir + "/pwned2 && echo \"$HOME\" | sh"
	x, err := NewExec([]string{hook, dir, "--team", "inference"}, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing(hostile, "ep'; touch "+dir+"/pwned3 #")
	x.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, x)
	if s := x.Stats(); s.Sent != 1 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
	for _, f := range []string{"pwned1", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: alert text was executed", f)
		}
	}
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(args), dir+"\n--team\ninference\n"; got != want {
		t.Errorf("argv %q, want %q (fixed, no alert text)", got, want)
	}
	var ev Event
	raw, err := os.ReadFile(filepath.Join(dir, "stdin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Alert.Objective != hostile || ev.Status != "firing" || ev.To != slo.Firing || ev.Schema != telemetry.JSONSchema {
		t.Errorf("stdin event %+v", ev)
	}
	// The alert's figures as in every ttftop document: a latency in ms.
	var figures struct {
		Alert struct {
			ValueMS     float64 `json:"value_ms"`
			ThresholdMS float64 `json:"threshold_ms"`
		}
	}
	if err := json.Unmarshal(raw, &figures); err != nil || figures.Alert.ValueMS != 7250 || figures.Alert.ThresholdMS != 5000 {
		t.Errorf("stdin alert %s (%v): want value_ms 7250, threshold_ms 5000", raw, err)
	}
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	if string(env) != hostile {
		t.Errorf("env %q, want the literal name", env)
	}
}

func TestExecOnlyNotableTransitions(t *testing.T) {
	dir := t.TempDir()
	hook := script(t, `cat >> "$1/log"; echo >> "$1/log"`)
	x, err := NewExec([]string{hook, dir}, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := firing("a", "ep")
	pending := slo.Transition{From: slo.Inactive, To: slo.Pending, Alert: f.Alert}
	x.Notify(epoch(), []slo.Transition{pending, f, resolved(f, epoch().Add(time.Minute))})
	shutdown(t, x)
	b, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"status":"firing"`) || !strings.Contains(lines[1], `"status":"resolved"`) {
		t.Errorf("runs:\n%s", b)
	}
}

func TestExecFailureAndTimeout(t *testing.T) {
	if _, err := NewExec([]string{"/nonexistent/hook"}, ExecOptions{}); err == nil {
		t.Error("missing program accepted")
	}
	hook := script(t, "printf 'boom\\033[2J\\r' >&2; exit 3\n")
	x, err := NewExec([]string{hook}, ExecOptions{Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("a", "ep")
	x.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, x)
	s := x.Stats()
	if s.Failed != 1 || s.Retried != 1 || !strings.Contains(s.LastError, "exit status 3") || !strings.Contains(s.LastError, `boom\x1b[2J`) || strings.ContainsRune(s.LastError, 0x1b) {
		t.Errorf("stats %+v: want the failure with its stderr escaped", s)
	}

	slow := script(t, "exec sleep 30\n")
	x, err = NewExec([]string{slow}, ExecOptions{Timeout: 200 * time.Millisecond, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	x.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, x)
	if d := time.Since(start); d > 5*time.Second || x.Stats().Failed != 1 {
		t.Errorf("timeout run took %v, stats %+v", d, x.Stats())
	}
}

// server records POSTed alert batches; fail makes the first n answers
// that status.
type server struct {
	mu      sync.Mutex
	batches [][]AMAlert
	raw     []string
	calls   int
	fail    int
	status  int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if s.calls <= s.fail {
		http.Error(w, "<html>upstream down</html>", s.status)
		return
	}
	var alerts []AMAlert
	if err := json.Unmarshal(body, &alerts); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.batches = append(s.batches, alerts)
	s.raw = append(s.raw, string(body))
	w.WriteHeader(http.StatusOK)
}

func TestWebhookRetriesThenSucceeds(t *testing.T) {
	srv := &server{fail: 2, status: http.StatusServiceUnavailable}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	w, err := NewWebhook(ts.URL+"/api/v2/alerts", WebhookOptions{Backoff: 10 * time.Millisecond, GeneratorURL: "http://ttftop.local/"})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("ttft-p95", "llama-prod")
	w.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, w)
	if s := w.Stats(); s.Sent != 1 || s.Failed != 0 || srv.calls != 3 {
		t.Fatalf("stats %+v after %d calls", s, srv.calls)
	}
	a := srv.batches[0][0]
	if a.Labels["alertname"] != "ttft-p95" || a.Labels["endpoint"] != "llama-prod" || a.Labels["severity"] != "warning" {
		t.Errorf("labels %v", a.Labels)
	}
	if !a.StartsAt.Equal(tr.Alert.ActiveAt) || !a.EndsAt.Equal(tr.At.Add(4*time.Minute)) || a.GeneratorURL != "http://ttftop.local/" {
		t.Errorf("times %v–%v, generator %q", a.StartsAt, a.EndsAt, a.GeneratorURL)
	}
	if !strings.Contains(a.Annotations["summary"], "TTFT p95 7.25s > 5s over 5m on llama-prod") {
		t.Errorf("summary %q", a.Annotations["summary"])
	}
	for _, key := range []string{`"labels"`, `"annotations"`, `"startsAt"`, `"endsAt"`, `"generatorURL"`} {
		if !strings.Contains(srv.raw[0], key) {
			t.Errorf("payload lacks %s: %s", key, srv.raw[0])
		}
	}
}

func TestWebhookGivesUp(t *testing.T) {
	srv := &server{fail: 100, status: http.StatusBadRequest}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	w, err := NewWebhook(ts.URL, WebhookOptions{Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("a", "ep")
	w.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, w)
	if s := w.Stats(); s.Failed != 1 || srv.calls != 1 || !strings.Contains(s.LastError, "HTTP 400") {
		t.Errorf("a 400 is not retried: %+v, %d calls", s, srv.calls)
	}

	srv = &server{fail: 100, status: http.StatusBadGateway}
	ts2 := httptest.NewServer(srv)
	defer ts2.Close()
	w, err = NewWebhook(ts2.URL, WebhookOptions{Backoff: time.Millisecond, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, w)
	if s := w.Stats(); s.Failed != 1 || srv.calls != 3 {
		t.Errorf("502: %+v after %d calls, want 3", s, srv.calls)
	}
}

func TestWebhookResendsFiringAndSendsResolved(t *testing.T) {
	srv := &server{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	w, err := NewWebhook(ts.URL, WebhookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("a", "ep")
	now := tr.At
	w.Notify(now, []slo.Transition{tr})
	w.Notify(now.Add(30*time.Second), nil) // not due
	w.Notify(now.Add(61*time.Second), nil) // re-send
	res := resolved(tr, now.Add(90*time.Second))
	w.Notify(res.At, []slo.Transition{res})
	w.Notify(now.Add(200*time.Second), nil) // nothing firing: nothing sent
	shutdown(t, w)
	if len(srv.batches) != 3 {
		t.Fatalf("%d posts, want 3: %v", len(srv.batches), srv.raw)
	}
	if e := srv.batches[1][0].EndsAt; !e.Equal(now.Add(61*time.Second + 4*time.Minute)) {
		t.Errorf("re-sent endsAt %v", e)
	}
	if e := srv.batches[2][0].EndsAt; !e.Equal(res.At) {
		t.Errorf("resolved endsAt %v, want %v", e, res.At)
	}
}

func TestFullQueueDropsWithoutBlocking(t *testing.T) {
	release := make(chan struct{})
	var calls sync.WaitGroup
	calls.Add(1)
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(calls.Done)
		<-release
	}))
	defer ts.Close()
	w, err := NewWebhook(ts.URL, WebhookOptions{QueueSize: 2, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("a", "ep")
	w.Notify(tr.At, []slo.Transition{tr})
	calls.Wait() // the worker is stuck in the first POST
	start := time.Now()
	for i := range 50 {
		f := firing("a", "ep")
		f.Alert.Objective = string(rune('b' + i))
		w.Notify(tr.At, []slo.Transition{f})
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("50 notifications took %v: the caller blocked", d)
	}
	if s := w.Stats(); s.Dropped != 48 {
		t.Errorf("dropped %d, want 48 (2 queued)", s.Dropped)
	}
	// Shutting down with a deadline cancels the stuck POST.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := w.Shutdown(ctx); err == nil {
		t.Error("shutdown returned nil with a stuck request")
	}
	close(release)
	w.Notify(tr.At, []slo.Transition{tr}) // after shutdown: dropped, no panic
	if s := w.Stats(); s.Dropped < 49 {
		t.Errorf("stats after shutdown %+v", s)
	}
}

func TestWebhookRefusesCredentialsInURL(t *testing.T) {
	_, err := NewWebhook("http://user:s3cret@am.example:9093/api/v2/alerts", WebhookOptions{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err %v", err)
	}
	if _, err := NewWebhook("ftp://x", WebhookOptions{}); err == nil {
		t.Error("ftp accepted")
	}
}

// healthLog collects Health reports from a notifier's worker.
type healthLog struct {
	mu sync.Mutex
	hs []Health
}

func (l *healthLog) add(h Health) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hs = append(l.hs, h)
}

func (l *healthLog) all() []Health {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Health(nil), l.hs...)
}

func TestWebhookReportsFailuresAndRecovery(t *testing.T) {
	// A reverse proxy in front of Alertmanager answering 405 during a
	// deploy: retried (not a payload rejection), reported at each attempt.
	srv := &server{fail: 3, status: http.StatusMethodNotAllowed}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var log healthLog
	w, err := NewWebhook(ts.URL+"/api/v2/alerts?token=s3cret", WebhookOptions{Backoff: time.Millisecond, Retries: 1, Report: log.add})
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != "webhook "+ts.URL+"/api/v2/alerts" {
		t.Errorf("name %q: want the URL without its query", w.Name())
	}
	tr := firing("a", "ep")
	w.Notify(tr.At, []slo.Transition{tr}) // attempts 1, 2: both 405, given up
	w.Notify(tr.At, []slo.Transition{tr}) // attempt 3: 405, attempt 4: delivered
	shutdown(t, w)
	hs := log.all()
	var got []string
	for _, h := range hs {
		got = append(got, string(h.Outcome))
	}
	if strings.Join(got, " ") != "retrying gave_up retrying recovered" {
		t.Fatalf("outcomes %v", got)
	}
	first, gaveUp := hs[0], hs[1]
	if first.Notifier != w.Name() || first.Attempt != 1 || first.MaxAttempts != 2 || first.ConsecutiveFailures != 1 ||
		first.Detail() != "HTTP 405 Method Not Allowed: <html>upstream down</html> (attempt 1 of 2, retrying in 1ms)" {
		t.Errorf("first report %+v: %s", first, first.Detail())
	}
	if !gaveUp.Failing() || gaveUp.Stats.Failed != 1 || gaveUp.Detail() != "HTTP 405 Method Not Allowed: <html>upstream down</html> (gave up after 2 attempts; 1 undelivered)" {
		t.Errorf("give-up report %+v: %s", gaveUp, gaveUp.Detail())
	}
	if last := hs[3]; last.Failing() || last.LastOK.IsZero() || last.ConsecutiveFailures != 0 || last.Stats.Sent != 1 || hs[2].ConsecutiveFailures != 3 {
		t.Errorf("recovery %+v, before it %+v", last, hs[2])
	}
	if s := w.Stats(); s.Sent != 1 || s.Failed != 1 || s.Retried != 2 || s.Undelivered() != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestWebhookRefusedIsRetriedWithBackoff(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // nothing listens there now: connection refused
	var log healthLog
	w, err := NewWebhook(url, WebhookOptions{Backoff: 20 * time.Millisecond, Retries: 2, Report: log.add})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("a", "ep")
	start := time.Now()
	w.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, w)
	hs := log.all()
	if len(hs) != 3 || hs[0].RetryIn != 20*time.Millisecond || hs[1].RetryIn != 40*time.Millisecond || hs[2].Outcome != GaveUp {
		t.Fatalf("reports %+v", hs)
	}
	if !strings.Contains(hs[0].Err, "connection refused") {
		t.Errorf("error %q", hs[0].Err)
	}
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("3 attempts in %v: the backoff was not waited", d)
	}
}

func TestExecRetriesAFailedRun(t *testing.T) {
	dir := t.TempDir()
	// Fails the first time (no marker yet), succeeds the second.
	hook := script(t, `if [ -e "$1/tried" ]; then cat > "$1/delivered"; exit 0; fi
touch "$1/tried"; exit 1
`)
	var log healthLog
	x, err := NewExec([]string{hook, dir}, ExecOptions{Backoff: time.Millisecond, Report: log.add})
	if err != nil {
		t.Fatal(err)
	}
	tr := firing("a", "ep")
	x.Notify(tr.At, []slo.Transition{tr})
	shutdown(t, x)
	if s := x.Stats(); s.Sent != 1 || s.Retried != 1 || s.Failed != 0 {
		t.Errorf("stats %+v", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "delivered")); err != nil {
		t.Errorf("second run did not get the event: %v", err)
	}
	if hs := log.all(); len(hs) != 2 || hs[0].Outcome != Retrying || hs[1].Outcome != Recovered || hs[0].Notifier != "on-alert "+hook {
		t.Errorf("reports %+v", hs)
	}
}
