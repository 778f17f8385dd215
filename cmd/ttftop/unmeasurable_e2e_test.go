//go:build integration

package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/fixtures"
)

// tgiServer serves the real TGI capture (internal/fixtures/testdata/metrics)
// on /metrics and its model on /info, on loopback.
func tgiServer(t *testing.T) string {
	t.Helper()
	page := fixtures.Read(t, "metrics", "tgi-metrics-excerpt.txt")
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(page))
	})
	mux.HandleFunc("/info", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"model_id":"bigscience/bloom-560m"}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// A TGI page scraped with --scrape: TGI has no TTFT histogram, so the
// built binary says the TTFT objective is unmeasurable, and why, from the
// start — in snapshot --json and in the dashboard's alerts — instead of
// "no data yet"; it never fires, and the TPOT objective beside it (TGI
// has that histogram) waits for data as before.
func TestScrapedTGISaysTTFTIsUnmeasurable(t *testing.T) {
	t.Parallel() // its own servers, tmux socket and files; most of it is waiting
	bin, dir, tm := tmuxWithBinary(t)
	url := tgiServer(t)
	ep := strings.TrimPrefix(url, "http://") + "/bigscience/bloom-560m"

	t.Run("snapshot", func(t *testing.T) {
		cmd := exec.Command(bin, "snapshot", "--scrape", url, "--duration", "3s", "--json")
		cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var doc struct {
			SLO struct {
				Objectives []struct{ Objective, Endpoint, State, Reason string }
				Alerts     []json.RawMessage
			}
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		states := map[string]string{}
		for _, o := range doc.SLO.Objectives {
			if o.Endpoint == ep {
				states[o.Objective] = o.State + ": " + o.Reason
			}
		}
		if states["ttft-p95"] != "unmeasurable: unmeasurable: TGI exposes no TTFT histogram" || !strings.HasPrefix(states["tpot-p95"], "no_data") ||
			len(doc.SLO.Alerts) != 0 {
			t.Errorf("objectives %v, alerts %d\n%s", states, len(doc.SLO.Alerts), out)
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		if out, err := tm("new-session", "-d", "-s", "tgi", "-x", "160", "-y", "50",
			"env", "TERM=xterm-256color", "XDG_CONFIG_HOME="+dir, bin, "dashboard", "--scrape", url); err != nil {
			t.Fatalf("tmux: %v %s", err, out)
		}
		screen := waitPane(t, tm, "tgi", 30*time.Second, func(s string) bool {
			return strings.Contains(s, "unmeasurable: TGI exposes no TTFT histogram")
		})
		var line string
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, "ttft-p95") {
				line = l
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(line), "N/A") || strings.Contains(line, "no data") || !strings.Contains(screen, "alerts: none firing") {
			t.Errorf("ttft alert line %q in\n%s", line, screen)
		}
	})
}
