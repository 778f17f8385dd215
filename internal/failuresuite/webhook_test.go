//go:build integration

package failuresuite

import (
	"strings"
	"testing"
	"time"
)

// webhookFailure is how a webhook cannot take alerts, and the words that
// must say so.
type webhookFailure struct {
	name string
	url  func(t *testing.T) string
	// said reports whether a line names the webhook and this failure.
	said func(line string) bool
}

func webhookFailures() []webhookFailure {
	return []webhookFailure{
		{name: "refused",
			url:  func(t *testing.T) string { return closedPortURL(t, "/api/v2/alerts") },
			said: func(l string) bool { return strings.Contains(l, "webhook") && strings.Contains(l, "refused") }},
		{name: "405",
			url: func(t *testing.T) string {
				sink := startWebhookSink(t, 405)
				t.Cleanup(func() {
					if sink.requests.Load() == 0 {
						t.Errorf("the 405 webhook was never called")
					}
				})
				return sink.url
			},
			said: func(l string) bool { return strings.Contains(l, "webhook") && strings.Contains(l, "405") }},
	}
}

// alertFlags make a TPOT alert fire within seconds on a healthy
// simulator (its TPOT is ~12 ms): something the webhook must deliver.
var alertFlags = []string{"--interval", "2s", "--slo-tpot", "1ms", "--slo-for", "1s"}

// TestWebhookFailuresSaid is Proof 5: an alert fires and the webhook
// cannot take it (connection refused, or 405) → the header on screen says
// so, and a headless dashboard says so on stderr.
func TestWebhookFailuresSaid(t *testing.T) {
	t.Parallel()
	sim := startSim(t, "127.0.0.1:0", "--model", "hook-m:1b", "--load", "0")
	endpoint := sim.addr + "/hook-m"
	for _, wf := range webhookFailures() {
		t.Run("headless/"+wf.name, func(t *testing.T) {
			t.Parallel()
			hl := startHeadless(t, "dashboard", append([]string{sim.url, "--webhook", wf.url(t)}, alertFlags...)...)
			fired := hl.mustWaitDoc(t, time.Time{}, 60*time.Second, "the TPOT alert firing", func(d snapshotDoc) bool {
				return hasAlert(currentAlerts(d), endpoint, isTPOT, "firing")
			})
			var line string
			took, ok := eventually(60*time.Second, 200*time.Millisecond, func() bool {
				for _, l := range hl.stderr.Lines() {
					if wf.said(l.text) {
						line = l.text
						return true
					}
				}
				return false
			})
			seen := map[string]time.Duration{}
			if ok {
				seen["stderr_after_firing"] = took
			}
			measured(t, "webhook-"+wf.name+"-headless", seen, "stderr_after_firing")
			if !ok {
				t.Fatalf("alert firing at %s, but stderr never said the webhook fails (%s) within 60 s; stderr:\n%s",
					fired.got.Format(time.TimeOnly), wf.name, hl.stderr.Text())
			}
			t.Logf("stderr: %s", line)
		})
		t.Run("screen/"+wf.name, func(t *testing.T) {
			t.Parallel()
			term := startTerminal(t, append([]string{ttftopBinary(t), sim.url, "--webhook", wf.url(t)}, alertFlags...)...)
			term.mustWaitScreen(60*time.Second, "an alert FIRING", func(s string) bool { return headerFiring(s) > 0 })
			firedAt := time.Now()
			scr, ok := term.waitScreen(60*time.Second, func(s string) bool { return wf.said(headerOf(s)) })
			seen := map[string]time.Duration{}
			if ok {
				seen["header_after_firing"] = time.Since(firedAt)
			}
			measured(t, "webhook-"+wf.name+"-screen", seen, "header_after_firing")
			if !ok {
				t.Fatalf("alert firing, but the header never said the webhook fails (%s) within 60 s; last screen:\n%s", wf.name, scr)
			}
			t.Logf("header:\n%s", headerOf(scr))
		})
	}
}
