//go:build integration

package failuresuite

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The replica scenario's clocks: the store scrapes every second, the
// PromQL source refreshes every 2 s and the view every second. A killed
// replica's next scrape fails at once (connection refused), so its target
// is down in the store within a scrape; the bound is two scrapes, a
// refresh and a view refresh, plus 2 s for a loaded two-core machine.
const (
	replicaScrape  = time.Second
	replicaRefresh = 2 * time.Second
	replicaView    = time.Second
	downBound      = 2*replicaScrape + replicaRefresh + replicaView + 2*time.Second
	// replicaMaxLag is the source's max_lag: before target health, a
	// replica without a sample for max_lag was retired and vanished
	// (after 5 min by default; 20 s here, so "still listed" is shown in
	// well under a minute).
	replicaMaxLag = 20 * time.Second
)

// fleetStore is a store scraping the replicas from a config file the
// scenario rewrites and reloads (SIGHUP), so that the store forgets a
// target as a service discovery that dropped it would.
type fleetStore struct {
	*store
	cfg string
}

// fleetScrapeConfig scrapes the targets (host:port) every second as one
// job, as service discovery lists a model's pods: a target dropped from a
// job's list gets staleness markers at once, where a whole job dropped on
// reload keeps its last up for the 5 min lookback.
func fleetScrapeConfig(targets ...string) string {
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	return "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: fleet\n    static_configs:\n      - targets: [" +
		strings.Join(quoted, ", ") + "]\n"
}

// retarget makes the store scrape only targets from now on.
func (f fleetStore) retarget(t *testing.T, targets ...string) {
	t.Helper()
	writeFile(t, filepath.Dir(f.cfg), filepath.Base(f.cfg), fleetScrapeConfig(targets...))
	f.proc.signal(t, syscall.SIGHUP)
}

// TestReplicaKilledPrometheus is issue 21's first proof against a real
// Prometheus: two simulator replicas of one model; one killed (kill -9)
// reads DOWN, with the store's reason, on screen and in JSON within
// downBound, its model row "1 of 2 replicas down"; its target_up alert is
// FIRING at page severity within 90 s, in JSON and in a real Alertmanager,
// the model row's at warning; it stays listed past max_lag; restarted,
// the alert resolves; dropped from the scrape config, it reads GONE and
// stays listed.
func TestReplicaKilledPrometheus(t *testing.T) {
	t.Parallel()
	checkReplicaKilled(t, "prometheus", func(t *testing.T, cfg string) *store { return startPrometheusConfig(t, cfg) })
}

// TestReplicaKilledVictoriaMetrics is the same against VictoriaMetrics
// scraping the replicas itself (its targets API gives the reason), with
// -search.latencyOffset=1s: at its default 30 s every figure, up
// included, would be 30 s late (TestVictoriaMetricsDefaultLag covers
// that lag).
func TestReplicaKilledVictoriaMetrics(t *testing.T) {
	t.Parallel()
	checkReplicaKilled(t, "victoriametrics", func(t *testing.T, cfg string) *store {
		return startVictoriaMetricsConfig(t, cfg, "-search.latencyOffset=1s")
	})
}

func checkReplicaKilled(t *testing.T, kind string, start func(*testing.T, string) *store) {
	model := "fleet-" + kind[:4]
	simArgs := []string{"--model", model + ":1b", "--load", "2"}
	a := startSim(t, "127.0.0.1:0", simArgs...)
	b := startSim(t, "127.0.0.1:0", simArgs...)
	dir := t.TempDir()
	fs := fleetStore{cfg: writeFile(t, dir, "scrape.yml", fleetScrapeConfig(a.addr, b.addr))}
	fs.store = start(t, fs.cfg)
	am := startAlertmanager(t)
	cfg := writeFile(t, dir, "ttftop.yaml", fmt.Sprintf("prometheus:\n  - url: %s\n    interval: %s\n    max_lag: %s\n",
		fs.url, replicaRefresh, replicaMaxLag))
	view := []string{"--config", cfg, "--refresh", replicaView.String()}
	recording := filepath.Join(dir, "fleet.jsonl.gz")
	hl := startHeadless(t, "dashboard", append(view, "--webhook", am.webhookURL(), "--record", recording)...)
	term := startTerminal(t, append([]string{ttftopBinary(t)}, view...)...)
	repA, repB := a.addr+"/"+model, b.addr+"/"+model

	hl.mustWaitDoc(t, time.Time{}, 2*time.Minute, "both replicas and the model row up", func(d snapshotDoc) bool {
		return targetUp(d, repA) == 1 && targetUp(d, repB) == 1 && targetUp(d, model) == 1
	})
	killedAt := time.Now()
	b.proc.kill(t)
	seen := watch(firingWait, killedAt,
		observation{"json_down_after", docSeen(hl, killedAt, func(d snapshotDoc) bool {
			return targetState(d, repB) == "down" && targetUp(d, repB) == 0 && replicasDown(d, model) == "1 of 2 replicas down"
		})},
		observation{"screen_down_after", screenSeen(term, func(s string) bool {
			row, ok := tableRow(s, model)
			return strings.Contains(headerOf(s), "1 DOWN") && ok && strings.Contains(row, "▼1")
		})},
		observation{"json_firing_after", docSeen(hl, killedAt, func(d snapshotDoc) bool {
			return hasAlert(currentAlerts(d), repB, isTargetUpPage, "firing") && hasAlert(currentAlerts(d), model, isTargetUpWarning, "firing")
		})},
		observation{"am_after", amSeen(am, repB, amTargetUp, true)})
	keys := []string{"json_down_after", "screen_down_after", "json_firing_after", "am_after"}
	requireWithin(t, kind+": replica killed, down", downBound, seen, keys[:2]...)
	requireWithin(t, kind+": replica killed, firing", firingWait, seen, keys[2:]...)
	if d, ok := hl.waitDoc(killedAt, firingWait, func(d snapshotDoc) bool { return targetState(d, repB) == "down" }); ok {
		t.Logf("%s: %s reads %s", kind, repB, endpointLabel(d.doc, repB, "target"))
		if kind == "prometheus" && !strings.Contains(endpointLabel(d.doc, repB, "target"), "connection refused") {
			t.Errorf("%s: the down replica's reason %q does not give the store's scrape error", kind, endpointLabel(d.doc, repB, "target"))
		}
	}
	// Listed, DOWN, in every document since it first read down, well past
	// max_lag (when it used to vanish).
	if d, ok := seen["json_down_after"]; ok {
		checkListed(t, hl, killedAt.Add(d), time.Now(), repB, "down")
		if time.Since(killedAt) < replicaMaxLag+10*time.Second {
			t.Errorf("%s: watched the dead replica for %s only, want past max_lag %s", kind, secs(time.Since(killedAt)), replicaMaxLag)
		}
	}

	restartedAt := time.Now()
	restartSim(t, b.addr, simArgs...)
	back := watch(resolveWait, restartedAt,
		observation{"json_resolved_after", docSeen(hl, restartedAt, func(d snapshotDoc) bool {
			return hasAlert(alertHistory(d), repB, isTargetUpPage, "resolved") && !hasAlert(currentAlerts(d), repB, isTargetUpPage, "firing") &&
				targetUp(d, repB) == 1 && replicasDown(d, model) == ""
		})},
		observation{"am_ended_after", amSeen(am, repB, amTargetUp, false)})
	requireWithin(t, kind+": replica restarted", resolveWait, back, "json_resolved_after", "am_ended_after")

	droppedAt := time.Now()
	fs.retarget(t, a.addr)
	gone := watch(time.Minute, droppedAt, observation{"json_gone_after", docSeen(hl, droppedAt, func(d snapshotDoc) bool {
		return targetState(d, repB) == "gone" && replicasDown(d, model) == "1 of 2 replicas down"
	})})
	requireWithin(t, kind+": target dropped from the store", time.Minute, gone, "json_gone_after")
	if d, ok := gone["json_gone_after"]; ok {
		from := droppedAt.Add(d)
		hl.mustWaitDoc(t, from.Add(replicaMaxLag+5*time.Second), replicaMaxLag+30*time.Second, "documents past max_lag after GONE", anyDoc)
		checkListed(t, hl, from, time.Now(), repB, "gone")
		gone["gone_listed_for"] = time.Since(from)
	}
	if _, ok := seen["json_firing_after"]; ok {
		firing, _ := hl.waitDoc(killedAt, time.Second, func(d snapshotDoc) bool {
			return targetState(d, repB) == "down" && hasAlert(currentAlerts(d), repB, isTargetUpPage, "firing")
		})
		checkReplayedDown(t, hl, recording, firing.doc.At, restartedAt, repB)
	}
	for k, v := range back {
		seen[k] = v
	}
	for k, v := range gone {
		seen[k] = v
	}
	measured(t, "replica-killed "+kind, seen, append(keys, "json_resolved_after", "am_ended_after", "json_gone_after", "gone_listed_for")...)
}

// checkReplayedDown stops the recording dashboard and replays its
// recording just after firedAt, when a live document read the replica down
// and its target-up alert firing: the replay reads the same.
func checkReplayedDown(t *testing.T, hl *headless, path string, firedAt, restartedAt time.Time, endpoint string) {
	t.Helper()
	hl.signal(t, syscall.SIGHUP) // a finished recording, as an SSH session's end leaves it
	if _, ok := hl.waitExit(10 * time.Second); !ok {
		t.Fatalf("the recording dashboard still runs 10 s after SIGHUP")
	}
	if _, err := readRecording(path); err != nil {
		t.Fatal(err)
	}
	// A second after the live document that first showed it down and
	// firing (its own date, not when the test read it): the replay
	// evaluates on its own ticks, up to one evaluation later than live.
	// Never past the restart, which soon brings the target back.
	if firedAt.IsZero() {
		t.Fatalf("no live document showed %s down and firing", endpoint)
	}
	at := firedAt.Add(time.Second)
	if at.After(restartedAt) {
		at = restartedAt
	}
	out := replayAt(t, path, at.UTC().Format(time.RFC3339Nano))
	if got := targetState(out.doc, endpoint); got != "down" {
		t.Errorf("replayed at %s: %s's target %q, want down", at, endpoint, got)
	}
	if !hasAlert(currentAlerts(out.doc), endpoint, isTargetUpPage, "firing") {
		t.Errorf("replayed at %s: %s's target-up alert is not firing:\n%.3000s", at, endpoint, out.stdout)
	}
}

// checkListed: every document read in [from, to] lists the endpoint with
// its target in state (down, gone), since one and the same time: a replica
// retired and found again (its rates over the window still answering)
// would read down anew, since later.
func checkListed(t *testing.T, hl *headless, from, to time.Time, endpoint, state string) {
	t.Helper()
	docs := hl.between(from, to)
	if len(docs) < 5 {
		t.Errorf("only %d documents between %s and %s", len(docs), from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	}
	first := ""
	for _, r := range docs {
		label := endpointLabel(r.doc, endpoint, "target")
		since, _, _ := strings.Cut(label, ": ")
		if first == "" {
			first = since
		}
		if got := targetState(r.doc, endpoint); got != state || since != first {
			t.Errorf("%s after it read %s: %s's target is %q (listed: %v), want %s (%s)", secs(r.got.Sub(from)), state, endpoint, label,
				listed(r.doc, endpoint), state, first)
			return
		}
	}
}

func listed(d snapshotDoc, endpoint string) bool {
	_, ok := endpointOf(d, endpoint)
	return ok
}

// targetUp is the endpoint's target_up figure as a fraction (1: up), -1 when absent.
func targetUp(d snapshotDoc, endpoint string) float64 {
	ep, ok := endpointOf(d, endpoint)
	if !ok {
		return -1
	}
	f, ok := ep.Signals["target_up"]
	if !ok || f.Value == nil {
		return -1
	}
	return *f.Value
}

// targetState is the first word of the endpoint's target label: "down",
// "gone", or "" (up, or not listed).
func targetState(d snapshotDoc, endpoint string) string {
	state, _, _ := strings.Cut(endpointLabel(d, endpoint, "target"), " ")
	return state
}

// replicasDown is a model row's "N of M replicas down" label.
func replicasDown(d snapshotDoc, model string) string {
	return endpointLabel(d, model, "replicas_down")
}

func endpointLabel(d snapshotDoc, endpoint, label string) string {
	ep, ok := endpointOf(d, endpoint)
	if !ok {
		return ""
	}
	return ep.Labels[label]
}

// isTargetUpPage and isTargetUpWarning tell the target_up objective's
// alerts by severity.
func isTargetUpPage(a alertDoc) bool    { return a.Kind == "target_up" && a.Severity == "page" }
func isTargetUpWarning(a alertDoc) bool { return a.Kind == "target_up" && a.Severity == "warning" }

// amTargetUp accepts the target_up objective's alertname.
func amTargetUp(alertname string) bool { return alertname == "target-up" }
