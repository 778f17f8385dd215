//go:build integration

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
	"github.com/ttftop/ttftop/internal/syncbuf"
	"github.com/ttftop/ttftop/slo/notify"
)

// TestNotificationsEndToEnd runs the built binary against the simulator
// and real receivers on loopback: webhooks that fail (405, refused) are
// said on stderr with counts and fail the run; the demo, snapshot and
// check deliver; an alert reaches a real Alertmanager and is resolved
// there when its cause goes away.
func TestNotificationsEndToEnd(t *testing.T) {
	t.Parallel() // its subtests already run side by side on their own receivers; serial, it held the package 37 s
	if testing.Short() {
		t.Skip("builds the binary and runs it against the simulator for up to a minute")
	}
	bin := buildTtftop(t)
	t.Run("webhook405", func(t *testing.T) { t.Parallel(); testWebhook405(t, bin) })
	t.Run("webhookRefusedSnapshot", func(t *testing.T) { t.Parallel(); testWebhookRefusedSnapshot(t, bin) })
	t.Run("checkTwoModels", func(t *testing.T) { t.Parallel(); testCheckTwoModels(t, bin) })
	t.Run("demoWebhook", func(t *testing.T) { t.Parallel(); testDemoWebhook(t, bin) })
	t.Run("alertmanager", func(t *testing.T) { t.Parallel(); testAlertmanager(t, bin) })
}

// slowModel is a 14B model on an A100 (TPOT ≈ 21 ms) that a quarter of its
// memory bandwidth slows to ≈ 85 ms, over the default 50 ms objective.
func slowModel() sim.ModelSpec { return model(sim.DemoDegrading) }

var quarterBandwidth = sim.Event{Kind: sim.EventBandwidth, Factor: 0.25}

// fastArgs make ttftop judge quickly: probes every 500 ms, TPOT only,
// alerts fire on the first breaching evaluation.
func fastArgs(url string) []string {
	return []string{url, "--model", sim.DemoDegrading, "--no-scrape", "--interval", "500ms", "--max-tokens", "12",
		"--slo-ttft", "0", "--slo-for", "0s", "--slo-keep-firing-for", "0s"}
}

func testWebhook405(t *testing.T, bin string) {
	url := startSim(t, slowModel(), quarterBandwidth)
	recv := newReceiver(t, http.StatusMethodNotAllowed)
	p := startTtftop(t, bin, append(fastArgs(url), "--refresh", "1s", "--webhook", recv.url())...)
	first := recv.waitPosts(t, 1, 30*time.Second)
	line := regexp.MustCompile(`ttftop: webhook http://127\.0\.0\.1:\d+/api/v2/alerts failing: HTTP 405 Method Not Allowed \(attempt 1 of 4, retrying in 1s\)`)
	p.waitStderr(t, line, first.Add(3*time.Second))
	gaveUp := regexp.MustCompile(`failing: HTTP 405 Method Not Allowed \(gave up after 4 attempts; 1 undelivered\)`)
	p.waitStderr(t, gaveUp, time.Now().Add(20*time.Second))
	t.Logf("first POST %s; said on stderr %s later", first.Format(time.TimeOnly), p.stderrAt(line).Sub(first).Round(time.Millisecond))
	code := p.stop(t)
	undelivered := regexp.MustCompile(`ttftop: notifications: webhook http://127\.0\.0\.1:\d+/api/v2/alerts: \d+ of \d+ notifications? undelivered \(last error: HTTP 405`)
	if code != 1 || !undelivered.MatchString(p.stderr.String()) {
		t.Errorf("exit %d, want 1 with the undelivered count:\n%s", code, p.stderr.String())
	}
}

func testWebhookRefusedSnapshot(t *testing.T, bin string) {
	url := startSim(t, slowModel(), quarterBandwidth)
	refused := closedPortURL(t) + "/api/v2/alerts"
	p := startTtftop(t, bin, append([]string{"snapshot", "--duration", "6s", "--json", "--webhook", refused}, fastArgs(url)...)...)
	line := regexp.MustCompile(`ttftop: webhook ` + regexp.QuoteMeta(refused) + ` failing: dial tcp [^ ]+: connect: connection refused \(attempt 1 of 4, retrying in 1s\)`)
	p.waitStderr(t, line, time.Now().Add(30*time.Second))
	code := p.wait(t, 30*time.Second)
	if code != 1 || !strings.Contains(p.stderr.String(), "undelivered (last error: dial tcp") {
		t.Errorf("exit %d, want 1 with the undelivered count:\n%s", code, p.stderr.String())
	}
	var doc struct {
		Sources []struct{ Name, Kind, State, Error string }
		SLO     struct {
			Objectives []struct {
				Objective, Endpoint, State, Data string
				ValueMS                          *float64 `json:"value_ms"`
				ThresholdMS                      float64  `json:"threshold_ms"`
			}
			Alerts []struct {
				Objective, State string
				FiredAt          time.Time `json:"fired_at"`
			}
		}
	}
	if err := json.Unmarshal([]byte(p.stdout.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, p.stdout.String())
	}
	var tpot bool
	for _, o := range doc.SLO.Objectives {
		if o.Objective == "tpot-p95" && strings.HasSuffix(o.Endpoint, "/"+sim.DemoDegrading) {
			tpot = true
			if o.State != "firing" || o.Data != "live" || o.ValueMS == nil || *o.ValueMS < 50 || o.ThresholdMS != 50 {
				t.Errorf("tpot objective %+v", o)
			}
		}
	}
	if !tpot || len(doc.SLO.Alerts) == 0 || doc.SLO.Alerts[0].State != "firing" {
		t.Fatalf("slo %+v", doc.SLO)
	}
	fired, said := doc.SLO.Alerts[0].FiredAt, p.stderrAt(line)
	if d := said.Sub(fired); d > 3*time.Second {
		t.Errorf("alert fired %s, refused delivery said on stderr %s: %v later", fired.Format(time.TimeOnly), said.Format(time.TimeOnly), d)
	}
	t.Logf("refused delivery said on stderr %v after the alert fired", said.Sub(fired).Round(time.Millisecond))
	var notifySeen bool
	for _, s := range doc.Sources {
		if s.Kind == "notify" {
			notifySeen = true
			if s.Name != "webhook "+refused || s.State != "error" || !strings.Contains(s.Error, "connection refused (attempt") {
				t.Errorf("notify source %+v", s)
			}
		}
	}
	if !notifySeen {
		t.Errorf("no notify source in %+v", doc.Sources)
	}
}

func testCheckTwoModels(t *testing.T, bin string) {
	// The simulator serves both; only the slow one's bandwidth is cut.
	healthy, slow := model(sim.DemoHealthy), slowModel()
	ev := quarterBandwidth
	ev.Model = slow.Name
	s := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{healthy, slow}, Scenario: sim.Scenario{Events: []sim.Event{ev}}})
	recv := newReceiver(t, http.StatusOK)
	p := startTtftop(t, bin, "check", s.URL(), "-n", "3", "--max-tokens", "12", "--webhook", recv.url())
	code := p.wait(t, 60*time.Second)
	out := p.stdout.String()
	host := strings.TrimPrefix(s.URL(), "http://")
	if code != 1 || !hasRow(out, "PASS", "tpot-p95", host+"/"+healthy.Name) || !hasRow(out, "FAIL", "tpot-p95", host+"/"+slow.Name) ||
		!hasRow(out, "PASS", "ttft-p95", host+"/"+slow.Name) || !hasRow(out, "5", "passed,", "1", "failed,", "0", "not", "measured") {
		t.Errorf("exit %d, want 1 with both models judged:\n%s\n%s", code, out, p.stderr.String())
	}
	posts := recv.all()
	if len(posts) != 1 || len(posts[0].alerts) != 1 {
		t.Fatalf("webhook got %+v, want one alert", posts)
	}
	if a := posts[0].alerts[0]; a.Labels["alertname"] != "tpot-p95" || a.Labels["endpoint"] != host+"/"+slow.Name || a.Labels["severity"] != "warning" {
		t.Errorf("alert %+v", a)
	}
}

func testDemoWebhook(t *testing.T, bin string) {
	recv := newReceiver(t, http.StatusOK)
	start := time.Now()
	p := startTtftop(t, bin, "demo", "--refresh", "5s", "--webhook", recv.url())
	var got notify.AMAlert
	waitUntil(t, 120*time.Second, "the demo's first alert at the receiver", func() bool {
		posts := recv.all()
		if len(posts) == 0 {
			return false
		}
		got = posts[0].alerts[0]
		return true
	})
	t.Logf("demo alert %s on %s delivered %s after start", got.Labels["alertname"], got.Labels["endpoint"], time.Since(start).Round(time.Second))
	if got.Labels["alertname"] == "" || !strings.Contains(got.Annotations["summary"], got.Labels["endpoint"]) || got.StartsAt.IsZero() {
		t.Errorf("alert %+v", got)
	}
	if code := p.stop(t); code != 0 || strings.Contains(p.stderr.String(), "failing") {
		t.Errorf("exit %d\n%s", code, p.stderr.String())
	}
}

func testAlertmanager(t *testing.T, bin string) {
	recv := newReceiver(t, http.StatusOK) // Alertmanager's own webhook receiver
	am := startAlertmanager(t, recv.srv.URL+"/am")
	flaky := newSwitchableSim(t)
	args := append(fastArgs(flaky.url), "--refresh", "1s", "--json", "--slo-window", "4s", "--webhook", am+"/api/v2/alerts")
	p := startTtftop(t, bin, args...)
	endpoint := strings.TrimPrefix(flaky.url, "http://") + "/" + sim.DemoDegrading
	start := time.Now()
	var active amAlert
	waitUntil(t, 60*time.Second, "the alert in Alertmanager", func() bool {
		a, ok := findAMAlert(t, am, "tpot-p95", endpoint)
		active = a
		return ok && a.Status.State == "active"
	})
	fired := time.Now()
	if !active.EndsAt.After(fired.Add(time.Minute)) {
		t.Errorf("active alert %+v: want endsAt minutes ahead (re-sent while firing)", active)
	}
	// The summary reads as a breach, rounded as on screen.
	breach := regexp.MustCompile(`^TPOT p95 ~?[0-9]+(\.[0-9]{1,2})?ms > 50ms over 4s on ` + regexp.QuoteMeta(endpoint) + ` \(warning\)$`)
	if !breach.MatchString(active.Annotations["summary"]) {
		t.Errorf("summary in Alertmanager %q, want %s", active.Annotations["summary"], breach)
	}
	t.Logf("summary in Alertmanager: %s", active.Annotations["summary"])
	flaky.slow.Store(false)
	var resolved amNotification
	waitUntil(t, 60*time.Second, "Alertmanager's resolved notification", func() bool {
		for _, n := range recv.amNotifications(t) {
			if n.Status == "resolved" && len(n.Alerts) == 1 && n.Alerts[0].Status == "resolved" && n.Alerts[0].Labels["alertname"] == "tpot-p95" {
				resolved = n
				return true
			}
		}
		return false
	})
	healed := time.Now()
	a := resolved.Alerts[0]
	if a.EndsAt.IsZero() || a.EndsAt.After(healed) || a.Labels["endpoint"] != endpoint {
		t.Errorf("resolved alert %+v: want endsAt set, in the past", a)
	}
	within := regexp.MustCompile(`^resolved: TPOT p95 ~?[0-9]+(\.[0-9]{1,2})?ms ≤ 50ms over 4s on `)
	if !within.MatchString(a.Annotations["summary"]) {
		t.Errorf("resolved summary %q, want %s", a.Annotations["summary"], within)
	}
	t.Logf("resolved summary: %s", a.Annotations["summary"])
	if still, ok := findAMAlert(t, am, "tpot-p95", endpoint); ok && still.Status.State == "active" && still.EndsAt.After(healed) {
		t.Errorf("Alertmanager still lists %+v as active", still)
	}
	t.Logf("in Alertmanager %s after start; resolved there %s after the cause went away",
		fired.Sub(start).Round(100*time.Millisecond), healed.Sub(fired).Round(100*time.Millisecond))
	// The --json lines say it too: firing, then resolved (the line after
	// the evaluation that resolved it may come after Alertmanager's
	// notification).
	var states map[string]bool
	waitUntil(t, 30*time.Second, "firing and resolved in the --json lines", func() bool {
		states = alertStates(t, p.stdout.String(), "tpot-p95", endpoint)
		return states["firing"] && states["resolved"]
	})
	if code := p.stop(t); code != 0 || strings.Contains(p.stderr.String(), "failing") {
		t.Errorf("exit %d\n%s", code, p.stderr.String())
	}
}

// alertStates returns the states objective's alert on endpoint had in the
// complete --json lines of out.
func alertStates(t *testing.T, out, objective, endpoint string) map[string]bool {
	t.Helper()
	states := map[string]bool{}
	lines := strings.Split(out, "\n")
	for _, line := range lines[:len(lines)-1] { // the last may be partial
		if line == "" {
			continue
		}
		var doc struct {
			SLO struct {
				Alerts []struct{ Objective, Endpoint, State string }
			}
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for _, a := range doc.SLO.Alerts {
			if a.Objective == objective && a.Endpoint == endpoint {
				states[a.State] = true
			}
		}
	}
	return states
}

// proc is a running ttftop with its output captured; stderr lines are
// time-stamped as they arrive.
type proc struct {
	cmd    *exec.Cmd
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	lines  *stampedLines
	exited chan struct{}
	err    error
}

func startTtftop(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, lines: &stampedLines{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	p.cmd.Stdout = p.stdout
	p.cmd.Stderr = io.MultiWriter(p.stderr, p.lines)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			if err := p.cmd.Process.Kill(); err != nil {
				t.Error(err)
			}
			<-p.exited
		}
	})
	return p
}

// wait waits for the process to exit by itself and returns its status.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(limit):
		t.Fatalf("still running after %v\nstdout:\n%s\nstderr:\n%s", limit, p.stdout.String(), p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// stop sends SIGTERM, as a service manager would, and returns the status.
func (p *proc) stop(t *testing.T) int {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	return p.wait(t, 20*time.Second)
}

// waitStderr waits until a stderr line matches re, failing at deadline.
func (p *proc) waitStderr(t *testing.T, re *regexp.Regexp, deadline time.Time) {
	t.Helper()
	for p.stderrAt(re).IsZero() {
		select {
		case <-p.exited:
			t.Fatalf("exited (%v) before a stderr line matched %s; stderr:\n%s", p.err, re, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stderr line matches %s by %s; stderr:\n%s", re, deadline.Format(time.TimeOnly), p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stderrAt is when the first stderr line matching re arrived (zero: none).
func (p *proc) stderrAt(re *regexp.Regexp) time.Time { return p.lines.first(re) }

// stampedLines splits what is written into lines and notes their arrival.
type stampedLines struct {
	mu      sync.Mutex
	partial string
	lines   []string
	at      []time.Time
}

func (s *stampedLines) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.partial += string(b)
	for {
		i := strings.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		s.lines, s.at = append(s.lines, s.partial[:i]), append(s.at, now)
		s.partial = s.partial[i+1:]
	}
}

func (s *stampedLines) first(re *regexp.Regexp) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range s.lines {
		if re.MatchString(l) {
			return s.at[i]
		}
	}
	return time.Time{}
}

// waitUntil polls ok every 50 ms until it holds, failing after limit.
func waitUntil(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// receiver is a loopback webhook receiver answering status to every POST
// and keeping what was posted.
type receiver struct {
	srv    *httptest.Server
	status int
	mu     sync.Mutex
	posts  []post
}

type post struct {
	at     time.Time
	path   string
	body   []byte
	alerts []notify.AMAlert // ttftop's posts (a JSON array)
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p := post{at: time.Now(), path: req.URL.Path, body: body}
		// Alertmanager's own notifications are an object; ttftop's
		// posts an array: only the latter decodes here.
		if json.Unmarshal(body, &p.alerts) != nil {
			p.alerts = nil
		}
		r.mu.Lock()
		r.posts = append(r.posts, p)
		r.mu.Unlock()
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/api/v2/alerts" }

func (r *receiver) all() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]post(nil), r.posts...)
}

// waitPosts waits for n posts and returns when the first arrived.
func (r *receiver) waitPosts(t *testing.T, n int, limit time.Duration) time.Time {
	t.Helper()
	waitUntil(t, limit, fmt.Sprintf("%d posts at the receiver", n), func() bool { return len(r.all()) >= n })
	return r.all()[0].at
}

// amNotification is what Alertmanager's webhook receiver is sent.
type amNotification struct {
	Status string `json:"status"`
	Alerts []struct {
		Status      string            `json:"status"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		StartsAt    time.Time         `json:"startsAt"`
		EndsAt      time.Time         `json:"endsAt"`
	} `json:"alerts"`
}

// amAlert is an alert as Alertmanager shows it (API and notifications).
type amAlert struct {
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
}

func (r *receiver) amNotifications(t *testing.T) []amNotification {
	t.Helper()
	var out []amNotification
	for _, p := range r.all() {
		var n amNotification
		if err := json.Unmarshal(p.body, &n); err != nil {
			t.Fatalf("Alertmanager sent %s: %v", p.body, err)
		}
		out = append(out, n)
	}
	return out
}

// startAlertmanager runs the real Alertmanager on loopback, grouping and
// notifying within a second, its webhook receiver at receiverURL, and
// returns its base URL. Without the binary the test is skipped.
func startAlertmanager(t *testing.T, receiverURL string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		if bin, err = exec.LookPath("alertmanager"); err != nil {
			t.Skip("Alertmanager not installed (Debian/Ubuntu: apt-get install prometheus-alertmanager)")
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	yaml := `route:
  receiver: hook
  group_by: [alertname, endpoint]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: ` + receiverURL + `
        send_resolved: true
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(closedPortURL(t), "http://")
	log := &syncbuf.Buffer{}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Error(err)
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			if err := cmd.Process.Kill(); err != nil {
				t.Error(err)
			}
			<-exited
		}
	})
	base := "http://" + addr
	waitUntil(t, 20*time.Second, "Alertmanager ready\n"+log.String(), func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

// findAMAlert looks an alert up in Alertmanager's API.
func findAMAlert(t *testing.T, base, name, endpoint string) (amAlert, bool) {
	t.Helper()
	resp, err := http.Get(base + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var alerts []amAlert
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts {
		if a.Labels["alertname"] == name && a.Labels["endpoint"] == endpoint {
			return a, true
		}
	}
	return amAlert{}, false
}

// switchableSim serves one simulated 14B model from two simulators behind
// one URL: the slow one (a quarter of its bandwidth) while slow is set,
// the healthy one after, so a test decides when the cause goes away.
type switchableSim struct {
	url  string
	slow atomic.Bool
}

func newSwitchableSim(t *testing.T) *switchableSim {
	t.Helper()
	start := func(events ...sim.Event) *sim.Server {
		return simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{slowModel()}, Scenario: sim.Scenario{Events: events}})
	}
	slow, healthy := start(quarterBandwidth), start()
	ss := &switchableSim{}
	ss.slow.Store(true)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ss.slow.Load() {
			slow.Handler().ServeHTTP(w, r)
			return
		}
		healthy.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	ss.url = front.URL
	return ss
}
