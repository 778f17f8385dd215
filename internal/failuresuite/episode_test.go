//go:build integration

package failuresuite

import (
	"strings"
	"testing"
	"time"
)

// The bound: a dead or 5xx endpoint is FIRING, and its alert in
// Alertmanager, within 60 s.
const firingBound = time.Minute

// Limits of the waits: longer than the bounds, so a late event is
// measured and reported rather than cut off.
const (
	firingWait  = 90 * time.Second
	resolveWait = 150 * time.Second
)

// watchers is what a failure episode is watched through: a dashboard on
// screen (whose --webhook is the Alertmanager) and a headless one.
type watchers struct {
	term     *terminal
	hl       *headless
	am       *alertmanager
	endpoint string
}

// healthyFor is how long an endpoint is watched healthy before it is made
// to fail: a full default availability window (1 m) of good probes, which
// the failures must outweigh, as in production. (Fewer good probes would
// let the alert fire sooner than it ever does for a long-healthy server.)
const healthyFor = time.Minute

// startWatchers starts both dashboards on url with extra flags, and waits
// until both show the endpoint healthy (a live client TTFT in JSON, the
// endpoint's row with figures on screen), then, when healthy is not 0,
// until JSON shows it healthy that much later.
func startWatchers(t *testing.T, url, endpoint string, healthy time.Duration, flags ...string) watchers {
	t.Helper()
	w := watchers{am: startAlertmanager(t), endpoint: endpoint}
	bin := ttftopBinary(t)
	w.term = startTerminal(t, append(append([]string{bin, url}, flags...), "--webhook", w.am.webhookURL())...)
	w.hl = startHeadless(t, "dashboard", append([]string{url}, flags...)...)
	live := func(d snapshotDoc) bool { return clientLive(d, endpoint, sigTTFT) }
	first := w.hl.mustWaitDoc(t, time.Time{}, 60*time.Second, "the endpoint with a live client TTFT", live)
	w.term.mustWaitScreen(30*time.Second, "the endpoint's row with figures", func(s string) bool {
		row, ok := tableRow(s, endpoint)
		return ok && latencyPair.MatchString(row)
	})
	if healthy > 0 {
		w.hl.mustWaitDoc(t, first.got.Add(healthy), healthy+30*time.Second, "the endpoint still healthy "+healthy.String()+" later", live)
	}
	return w
}

// clientLive reports whether the endpoint's client figure of sig is a
// live number in d.
func clientLive(d snapshotDoc, endpoint, sig string) bool {
	ep, ok := endpointOf(d, endpoint)
	if !ok {
		return false
	}
	f, ok := clientFigure(ep, sig)
	return ok && f.liveNumber()
}

// availabilityFiring is the endpoint's availability alert firing in d.
func availabilityFiring(d snapshotDoc, endpoint string) bool {
	return hasAlert(currentAlerts(d), endpoint, isAvailability, "firing")
}

// availabilityResolved is an episode of the endpoint's availability
// alert listed as resolved, and none firing.
func availabilityResolved(d snapshotDoc, endpoint string) bool {
	return hasAlert(alertHistory(d), endpoint, isAvailability, "resolved") && !availabilityFiring(d, endpoint)
}

// firingObservations are the three ways an availability alert must show.
func (w watchers) firingObservations(from time.Time) []observation {
	return []observation{
		{"json_firing_after", docSeen(w.hl, from, func(d snapshotDoc) bool { return availabilityFiring(d, w.endpoint) })},
		{"screen_firing_after", screenSeen(w.term, func(s string) bool {
			_, ok := alertLine(s, "FIRING", w.endpoint, availabilityName)
			return ok && headerFiring(s) > 0
		})},
		{"am_after", amSeen(w.am, w.endpoint, amAvailability, true)},
	}
}

// resolvedObservations are the three ways its resolution must show: a
// RESOLVED entry in JSON and on screen, and the alert ended in
// Alertmanager.
func (w watchers) resolvedObservations(from time.Time) []observation {
	return []observation{
		{"json_resolved_after", docSeen(w.hl, from, func(d snapshotDoc) bool { return availabilityResolved(d, w.endpoint) })},
		{"screen_resolved_after", screenSeen(w.term, func(s string) bool {
			_, resolved := alertLine(s, "RESOLVED", w.endpoint, availabilityName)
			_, firing := alertLine(s, "FIRING", w.endpoint, availabilityName)
			return resolved && !firing
		})},
		{"am_ended_after", amSeen(w.am, w.endpoint, amAvailability, false)},
	}
}

var (
	firingKeys   = []string{"json_firing_after", "screen_firing_after", "am_after"}
	resolvedKeys = []string{"json_resolved_after", "screen_resolved_after", "am_ended_after"}
)

// TestServerKilled is Proof 1: the server, healthy for a minute, is
// killed (kill -9) → the endpoint's availability alert is FIRING on screen
// and in the headless JSON, and reaches a real Alertmanager, within 60 s
// at --interval 2s; the server comes back on the same port → the alert
// resolves: a RESOLVED entry on screen and in JSON, and the alert ends in
// Alertmanager.
func TestServerKilled(t *testing.T) {
	t.Parallel()
	simArgs := []string{"--model", "dead-m:1b", "--load", "1"}
	sim := startSim(t, "127.0.0.1:0", simArgs...)
	endpoint := sim.addr + "/dead-m"
	w := startWatchers(t, sim.url, endpoint, healthyFor, "--interval", "2s")

	killedAt := time.Now()
	sim.proc.kill(t)
	fired := watch(firingWait, killedAt, w.firingObservations(killedAt)...)
	requireWithin(t, "server killed", firingBound, fired, firingKeys...)
	if _, ok := fired["json_firing_after"]; !ok {
		measured(t, "server-killed interval=2s", fired, firingKeys...)
		return // nothing fired: there is nothing to resolve
	}
	// While the server is dead the client figures show the failure.
	for _, r := range w.hl.between(killedAt.Add(6*time.Second), time.Now()) {
		if ep, ok := endpointOf(r.doc, endpoint); ok {
			if f, ok := clientFigure(ep, sigTTFT); ok && f.liveNumber() {
				t.Errorf("%s after the kill: client TTFT is a live number: %s", secs(r.got.Sub(killedAt)), f)
				break
			}
		}
	}

	restartedAt := time.Now()
	restartSim(t, sim.addr, simArgs...)
	resolved := watch(resolveWait, restartedAt, w.resolvedObservations(restartedAt)...)
	requireWithin(t, "server back", resolveWait, resolved, resolvedKeys...)
	for k, v := range resolved {
		fired[k] = v
	}
	measured(t, "server-killed interval=2s", fired, append(firingKeys, resolvedKeys...)...)
}

// TestServerKilledDefaultInterval is Proof 1 at the default probe
// interval (no --interval, no --slo-* flag): the server, healthy for a
// minute, is killed → the default availability objective fires within
// 60 s, in JSON and in Alertmanager.
func TestServerKilledDefaultInterval(t *testing.T) {
	t.Parallel()
	sim := startSim(t, "127.0.0.1:0", "--model", "dflt-m:1b", "--load", "0")
	endpoint := sim.addr + "/dflt-m"
	am := startAlertmanager(t)
	hl := startHeadless(t, "dashboard", sim.url, "--webhook", am.webhookURL())
	live := func(d snapshotDoc) bool { return clientLive(d, endpoint, sigTTFT) }
	first := hl.mustWaitDoc(t, time.Time{}, 60*time.Second, "the endpoint with a live client TTFT", live)
	hl.mustWaitDoc(t, first.got.Add(healthyFor), healthyFor+30*time.Second, "the endpoint still healthy a minute later", live)
	killedAt := time.Now()
	sim.proc.kill(t)
	seen := watch(firingWait, killedAt,
		observation{"json_firing_after", docSeen(hl, killedAt, func(d snapshotDoc) bool { return availabilityFiring(d, endpoint) })},
		observation{"am_after", amSeen(am, endpoint, amAvailability, true)})
	measured(t, "server-killed interval=default", seen, "json_firing_after", "am_after")
	requireWithin(t, "server killed, default interval", firingBound, seen, "json_firing_after", "am_after")
}

// TestOutage503 is Proof 2: a simulator outage (every request 503 for
// 60 s, after 80 s of good service) → the availability alert is FIRING on
// screen, in JSON and in Alertmanager within 60 s of its start; during it
// no client latency is shown live (JSON: the probe figures are in an
// error state; screen: the row shows ERROR and no latency pair); after it
// the alert resolves with a RESOLVED entry and ends in Alertmanager.
func TestOutage503(t *testing.T) {
	t.Parallel()
	// The outage starts once the dashboards have seen more than a full
	// availability window of good probes (they are ready a few seconds
	// after the simulator).
	const outageAt, outageFor = healthyFor + 20*time.Second, 60 * time.Second
	sim := startSim(t, "127.0.0.1:0", "--model", "out-m:1b", "--load", "1",
		"--event", "outage@"+outageAt.String()+",for="+outageFor.String())
	endpoint := sim.addr + "/out-m"
	w := startWatchers(t, sim.url, endpoint, 0, "--interval", "2s")
	// The scenario clock starts between launch and banner: time from the
	// earliest possible start (conservative for the 60 s bound), judge
	// "during" from the latest.
	start := sim.launched.Add(outageAt)
	end := sim.launched.Add(outageAt + outageFor)
	if time.Now().After(start) {
		t.Fatalf("the dashboards took until %s after the simulator started to show it healthy: the outage (at %s) began first",
			secs(time.Since(sim.launched)), outageAt)
	}
	fired := watch(firingWait, start, w.firingObservations(start)...)
	requireWithin(t, "503 outage", firingBound, fired, firingKeys...)

	// Keep reading the screen until the outage ends, then judge every
	// screen and document of the outage (after the first failed probe
	// had time to arrive: one interval, a probe and a refresh).
	during := sim.ready.Add(outageAt + 6*time.Second)
	eventually(time.Until(end)+time.Second, time.Second, func() bool {
		if _, err := w.term.screen(); err != nil {
			t.Logf("reading the screen: %v", err)
		}
		return time.Now().After(end)
	})
	checkOutageShown(t, w, during, end.Add(-time.Second))

	if _, ok := fired["json_firing_after"]; !ok {
		measured(t, "outage-503", fired, firingKeys...)
		return // nothing fired: there is nothing to resolve
	}
	resolved := watch(resolveWait, end, w.resolvedObservations(end)...)
	requireWithin(t, "outage over", resolveWait, resolved, resolvedKeys...)
	for k, v := range resolved {
		fired[k] = v
	}
	measured(t, "outage-503", fired, append(firingKeys, resolvedKeys...)...)
}

// checkOutageShown asserts that between from and to no client latency was
// shown as live: in every JSON document the client TTFT and TPOT are in an
// error state and the client error rate is above zero; on every screen the
// endpoint's row says ERROR and shows no latency pair.
func checkOutageShown(t *testing.T, w watchers, from, to time.Time) {
	t.Helper()
	docs := w.hl.between(from, to)
	if len(docs) < 10 {
		t.Errorf("only %d JSON documents during the outage", len(docs))
	}
	for _, r := range docs {
		ep, ok := endpointOf(r.doc, w.endpoint)
		if !ok {
			t.Errorf("document at %s: the endpoint is missing", r.doc.At.Format(time.RFC3339))
			return
		}
		for _, sig := range []string{sigTTFT, sigTPOT} {
			f, ok := clientFigure(ep, sig)
			if !ok || !f.failing() {
				t.Errorf("document at %s, during the outage: client %s is %s (present %v), want an error state", r.doc.At.Format(time.RFC3339), sig, f, ok)
				return
			}
		}
		if f, ok := clientFigure(ep, "error_rate"); !ok || f.Value == nil || *f.Value <= 0 {
			t.Errorf("document at %s, during the outage: client error rate is %s (present %v), want a value above 0", r.doc.At.Format(time.RFC3339), f, ok)
			return
		}
	}
	shots := w.term.captures(from, to)
	if len(shots) < 5 {
		t.Errorf("only %d screens read during the outage", len(shots))
	}
	for _, c := range shots {
		row, ok := tableRow(c.text, w.endpoint)
		if !ok {
			t.Errorf("screen at %s, during the outage: no row for the endpoint:\n%s", c.at.Format(time.TimeOnly), c.text)
			return
		}
		if m := latencyPair.FindString(row); m != "" {
			t.Errorf("screen at %s, during the outage: the row shows a latency %q:\n%s", c.at.Format(time.TimeOnly), m, row)
			return
		}
		if !strings.Contains(row, "ERROR") {
			t.Errorf("screen at %s, during the outage: the row does not say ERROR:\n%s", c.at.Format(time.TimeOnly), row)
			return
		}
	}
}
