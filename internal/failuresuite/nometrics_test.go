//go:build integration

package failuresuite

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// noMetricsFor is how long the headless dashboard runs against a server
// without /metrics: the state shows from the first scrape; the manual
// check (docs/failures.md) runs it for 60 s.
const noMetricsFor = 8 * time.Second

// TestQuickModeWithoutMetrics is issue 21's Proof 3: quick mode against a
// healthy OpenAI-compatible server that has no /metrics (as most gateways
// and hosted APIs) → the probes measure, no source ever reads as failing
// on the headless dashboard, the scrape is said as information ("no
// engine metrics at …; --no-scrape to silence"), and `snapshot --json`
// lists no failing source and exits 0.
func TestQuickModeWithoutMetrics(t *testing.T) {
	t.Parallel()
	gw := startFake(t, prompt)
	hl := startHeadless(t, "dashboard", gw.url, "--interval", "1s", "--max-tokens", "8")
	start := time.Now()
	hl.mustWaitDoc(t, start, 30*time.Second, "a live TTFT from the probes", func(d snapshotDoc) bool {
		ep, ok := endpointByModel(d, fakeModel)
		f, has := anyFigure(ep, sigTTFT)
		return ok && has && f.liveNumber()
	})
	if _, ok := hl.waitDoc(time.Now().Add(noMetricsFor), noMetricsFor+10*time.Second, func(snapshotDoc) bool { return true }); !ok {
		t.Fatalf("the dashboard stopped printing: %s", hl.stderr.Text())
	}
	docs := hl.all()
	informed := false
	for _, r := range docs {
		for _, s := range r.doc.Sources {
			if s.State == "error" || s.State == "stale" {
				t.Errorf("%s after start: source %s %s (%s): want no failing source for a /metrics nobody asked for", secs(r.got.Sub(start)), s.Name, s.State, s.Error)
			}
			if s.Kind == "scrape" {
				desc, _ := s.fields["description"].(string)
				informed = informed || s.State == "no_data" && strings.Contains(desc, "no engine metrics at "+gw.url+"/metrics") && strings.Contains(desc, "--no-scrape to silence")
			}
		}
	}
	if !informed {
		t.Errorf("no document said the missing /metrics as information; last:\n%s", hl.lastDocText())
	}
	t.Logf("%d documents over %s, no failing source", len(docs), secs(time.Since(start)))

	// snapshot --json: exit 0, no failing source.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, ttftopBinary(t), "snapshot", gw.url, "--json", "--duration", "5s", "--interval", "1s", "--max-tokens", "8")
	cmd.Env = append(os.Environ(), isolatedEnv(t)...)
	var stdout, stderr lineLog
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		t.Errorf("snapshot exited %d, want 0: %s", ee.ExitCode(), stderr.Text())
	default:
		t.Fatalf("snapshot: %v", err)
	}
	var d snapshotDoc
	if err := json.Unmarshal([]byte(stdout.Text()), &d); err != nil {
		t.Fatalf("snapshot --json: %v\n%s", err, stdout.Text())
	}
	for _, s := range d.Sources {
		if s.State == "error" || s.State == "stale" {
			t.Errorf("snapshot --json: source %s %s (%s), want none failing", s.Name, s.State, s.Error)
		}
	}
	if ep, ok := endpointByModel(d, fakeModel); !ok {
		t.Errorf("snapshot --json: no endpoint %s", fakeModel)
	} else if f, _ := anyFigure(ep, sigTTFT); !f.hasNumber() {
		t.Errorf("snapshot --json: TTFT %s, want measured", f)
	}
}
