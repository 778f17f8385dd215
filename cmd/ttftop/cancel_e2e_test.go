//go:build integration

package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/sim/simtest"
)

// Ctrl-C during `probe -n 20` stops the request in flight: the built
// binary says it was cancelled — completed 1, failed 0, cancelled 1 — and
// leaves it out of failures, error kinds and goodput, in the table, --jsonl
// and --csv alike.
func TestProbeCtrlCIsNotAFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildTtftop(t)
	for _, format := range []string{"table", "jsonl", "csv"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			out := probeInterrupted(t, bin, format)
			switch format {
			case "table":
				if !strings.Contains(out, "completed 1  failed 0  cancelled 1 (") || !hasRow(out, "2", "-", "-", "-", "-") ||
					!strings.Contains(out, " cancelled\n") || strings.Contains(out, "failures:") ||
					!strings.Contains(out, "goodput 100.0% (1 of 1 requests") {
					t.Errorf("table:\n%s", out)
				}
			case "jsonl":
				lines := strings.Split(strings.TrimSpace(out), "\n")
				var second probeRequestJSON
				var sum probeSummaryJSON
				if len(lines) != 3 || json.Unmarshal([]byte(lines[1]), &second) != nil || json.Unmarshal([]byte(lines[2]), &sum) != nil {
					t.Fatalf("want 2 requests and the summary:\n%s", out)
				}
				if !second.Cancelled || second.OK || second.TTFTms != nil {
					t.Errorf("request 2 %+v", second)
				}
				if sum.Completed != 1 || sum.Failed != 0 || sum.Cancelled != 1 || len(sum.ErrorKinds) != 0 ||
					sum.Goodput == nil || sum.Goodput.Requests != 1 || sum.Goodput.Share != 1 {
					t.Errorf("summary %+v goodput %+v", sum, sum.Goodput)
				}
			case "csv":
				rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
				if err != nil || len(rows) != 3 {
					t.Fatalf("%v\n%s", err, out)
				}
				col := map[string]int{}
				for i, h := range rows[0] {
					col[h] = i
				}
				if got := rows[2]; got[col["cancelled"]] != "true" || got[col["good"]] != "" || rows[1][col["cancelled"]] != "false" {
					t.Errorf("header %v\nrequest 2 %v", rows[0], rows[2])
				}
			}
		})
	}
}

// probeInterrupted runs probe -n 20 against a simulator, sends SIGINT while
// the second request streams, and returns stdout.
func probeInterrupted(t *testing.T, bin, format string) string {
	args := []string{"probe", "--model", sim.DemoHealthy, "-n", "20", "--max-tokens", "400"}
	if format != "table" {
		args = append(args, "--"+format)
	}
	p := interruptSecondRequest(t, bin, args...)
	p.wait(t, 20*time.Second)
	return p.stdout.String()
}

// interruptSecondRequest runs `ttftop ARGS SIM-URL` against a simulator
// and sends SIGINT while the second request streams.
func interruptSecondRequest(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	srv := simtest.Start(t, sim.Config{Listen: "127.0.0.1:0", Seed: 1, Models: []sim.ModelSpec{model(sim.DemoHealthy)}})
	p := startTtftop(t, bin, append(args, srv.URL())...)
	// The simulator counts a request's latency as it ends; with no other
	// load, any engine step after that is the second request's.
	var before int64
	waitUntil(t, 60*time.Second, "the first request to end", func() bool {
		before = srv.Stats()[0].Steps
		return simRequestsEnded(t, srv.URL()) >= 1
	})
	waitUntil(t, 60*time.Second, "the second request streaming", func() bool { return srv.Stats()[0].Steps > before+2 })
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	return p
}

// Ctrl-C during `check` judges what was measured before it — the request
// in flight counts nowhere — and says the check was interrupted: no N/A
// rows for objectives that were judged, and exit 2 (not a pass).
func TestCheckCtrlCJudgesWhatWasMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildTtftop(t)
	p := interruptSecondRequest(t, bin, "check", "--model", sim.DemoHealthy, "-n", "20", "--max-tokens", "400")
	code := p.wait(t, 20*time.Second)
	out, errOut := p.stdout.String(), p.stderr.String()
	if code != 2 || !hasRow(out, "PASS", "ttft-p95") || !strings.Contains(out, "(1 samples)") || !strings.Contains(out, "0% (1 requests)") ||
		strings.Contains(out, "N/A") || !strings.Contains(out, "3 passed, 0 failed, 0 not measured (interrupted") ||
		!strings.Contains(errOut, "interrupted") || strings.Contains(errOut, "could not measure") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// simRequestsEnded reads the simulator's count of ended requests from its
// /metrics page (vllm:e2e_request_latency_seconds_count).
func simRequestsEnded(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "vllm:e2e_request_latency_seconds_count") {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatal(err)
			}
			total += v
		}
	}
	return total
}
