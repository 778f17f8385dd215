//go:build integration

package failuresuite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stallConfig probes each fake every 2 s with short timeouts (a stall
// after 3 s without an event, a request given up after 6 s) so failures
// come quickly; scraping is off (the fakes have no /metrics).
func stallConfig(fakes map[string]*fakeServer) string {
	var b strings.Builder
	b.WriteString("probe:\n  interval: 2s\n  timeout: 6s\n  stall_timeout: 3s\n  max_tokens: 6\nendpoints:\n")
	for _, name := range []string{"silent", "midstream", "heartbeat", "slow"} {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    model: %s\n    api: openai-chat\n    metrics: \"off\"\n", name, fakes[name].url, fakeModel)
	}
	return b.String()
}

// TestStalledAndSlowServers is Proof 3: servers that accept and never
// answer, stop mid-stream, or send only keep-alive comments fail their
// probes with a category (stall, stall, timeout) in the probe records,
// and their availability alerts fire; a server streaming 300 ms per
// token answers every probe but breaks a 100 ms TPOT objective, and that
// alert fires.
func TestStalledAndSlowServers(t *testing.T) {
	t.Parallel()
	fakes := map[string]*fakeServer{
		"silent":    startFake(t, silent),
		"midstream": startFake(t, midStream),
		"heartbeat": startFake(t, heartbeatOnly),
		"slow":      startFake(t, slowTokens),
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "ttftop.yaml", stallConfig(fakes))
	rec := filepath.Join(dir, "probes.jsonl")
	start := time.Now()
	hl := startHeadless(t, "dashboard", "--config", cfg, "--slo-tpot", "100ms", "--slo-for", "5s", "--record", rec)

	wantKind := map[string]string{"silent": "stall", "midstream": "stall", "heartbeat": "timeout"}
	var obs []observation
	for name, kind := range wantKind {
		endpoint := name + "/" + fakeModel
		obs = append(obs,
			observation{name + "_" + kind + "_after", probeRecorded(rec, endpoint, func(p recordedProbe) bool {
				return !p.OK && p.ErrorKind == kind
			})},
			observation{name + "_firing_after", docSeen(hl, start, func(d snapshotDoc) bool { return availabilityFiring(d, endpoint) })})
	}
	slowEndpoint := "slow/" + fakeModel
	obs = append(obs,
		observation{"slow_ok_probe_after", probeRecorded(rec, slowEndpoint, func(p recordedProbe) bool {
			return p.OK && p.TPOTms >= float64(tokenGap/time.Millisecond)*2/3
		})},
		observation{"slow_tpot_firing_after", docSeen(hl, start, func(d snapshotDoc) bool {
			return hasAlert(currentAlerts(d), slowEndpoint, isTPOT, "firing")
		})})
	var keys []string
	for _, o := range obs {
		keys = append(keys, o.name)
	}
	seen := watch(firingWait+30*time.Second, start, obs...)
	measured(t, "stalled-and-slow", seen, keys...)
	requireWithin(t, "stalled and slow servers", firingWait+30*time.Second, seen, keys...)

	// No failing server's probe may pass, and every failure of theirs is
	// categorised.
	r, err := readRecording(rec)
	if err != nil {
		t.Fatal(err)
	}
	for name := range wantKind {
		for _, p := range r.probes(name + "/" + fakeModel) {
			if p.OK || p.ErrorKind == "" {
				t.Errorf("%s: probe record %+v: want a failure with an error kind", name, p)
			}
		}
	}
	for name, f := range fakes {
		if f.requests.Load() == 0 {
			t.Errorf("%s: the fake server was never probed", name)
		}
	}
}

// probeRecorded is an observation on a recording being written: a probe
// record of endpoint that pred accepts.
func probeRecorded(path, endpoint string, pred func(recordedProbe) bool) func() (time.Time, bool) {
	return func() (time.Time, bool) {
		r, err := readRecording(path)
		if err != nil {
			return time.Time{}, false
		}
		for _, p := range r.probes(endpoint) {
			if pred(p) {
				return time.Now(), true
			}
		}
		return time.Time{}, false
	}
}
