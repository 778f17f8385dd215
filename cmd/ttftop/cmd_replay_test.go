package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
)

// TestRecordThenReplay records a headless demo, then reads it back: the
// snapshot at the end shows the three endpoints with their figures, and a
// truncated copy replays up to the damage and says where it stopped.
func TestRecordThenReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for several seconds")
	}
	dir := t.TempDir()
	rec := filepath.Join(dir, "demo.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 7*time.Second)
	defer cancel()
	var out, errb strings.Builder
	if code := run(ctx, []string{"demo", "--record", rec, "--refresh", "5s"}, &out, &errb); code != 0 {
		t.Fatalf("demo exit %d: %s", code, errb.String())
	}
	code, js, errOut := runCmd(t, "replay", rec, "--json", "--window", "1m")
	if code != 0 {
		t.Fatalf("replay exit %d: %s", code, errOut)
	}
	var doc struct {
		Endpoints []struct {
			Model   string
			Signals map[string]struct {
				P50   *float64 `json:"p50_ms"`
				State string
			}
			// The replay's diagnosis at the instant, as live's snapshots
			// carry it.
			Diagnosis *struct{ Causes []struct{ Cause string } }
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	models := map[string]bool{}
	for _, ep := range doc.Endpoints {
		models[ep.Model] = true
		if ep.Signals["ttft"].P50 == nil {
			t.Errorf("%s: no TTFT in the replayed snapshot", ep.Model)
		}
		if ep.Diagnosis == nil || len(ep.Diagnosis.Causes) == 0 {
			t.Errorf("%s: no diagnosis in the replayed snapshot", ep.Model)
		}
	}
	for _, m := range []string{sim.DemoHealthy, sim.DemoDegrading, sim.DemoBursty} {
		if !models[m] {
			t.Errorf("replay lacks %s: %s", m, js)
		}
	}

	// Cut the recording in the middle of a line.
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, append(data[:len(data)*2/3:len(data)*2/3], []byte("{\"kind\":\"sam")...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, js, errOut = runCmd(t, "replay", cut, "--json")
	if code != 0 || !strings.Contains(errOut, "recording stops at line") || !strings.Contains(js, `"endpoints"`) {
		t.Errorf("damaged replay: exit %d\nstderr %s", code, errOut)
	}
}

// TestReplayWithoutSettings: a recording from before settings lines
// replays as before (judged again with the defaults) and says so.
func TestReplayWithoutSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.jsonl")
	at := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	fmt.Fprintf(&b, "{\"kind\":\"header\",\"at\":%q,\"format\":\"ttftop-recording\",\"version\":1}\n", at.Format(time.RFC3339Nano))
	b.WriteString("{\"kind\":\"checkpoint\",\"at\":\"0001-01-01T00:00:00Z\",\"line\":2}\n")
	fmt.Fprintf(&b, "{\"kind\":\"checkpoint\",\"at\":%q,\"seq\":1,\"line\":3}\n", at.Format(time.RFC3339Nano))
	for i := range 20 {
		fmt.Fprintf(&b, "{\"kind\":\"sample\",\"at\":%q,\"endpoint\":\"e\",\"signal\":\"ttft\",\"source\":\"probe:x\",\"value\":0.5,\"interval\":1000000000}\n",
			at.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(t, "replay", path, "--json", "--at", "10s")
	if code != 0 || !strings.Contains(stderr, "the recording has no settings") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		Judged string
		Alerts []struct{ Objective, State string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Judged != "again" || len(doc.Alerts) != 3 { // the default objectives on e, probed: TTFT, TPOT, availability
		t.Errorf("judged %q, alerts %+v", doc.Judged, doc.Alerts)
	}
}

// TestExporterServesProbeMetrics runs `ttftop exporter` against the
// simulator and reads its /metrics and /healthz.
func TestExporterServesProbeMetrics(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"exporter", url, "--listen", addr, "--interval", "300ms", "--max-tokens", "8"}, io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exporter exit %d", code)
		}
	}()
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if strings.Contains(body, `ttftop_probe_requests_total{`) && strings.Contains(body, "ttftop_probe_ttft_seconds_bucket") {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, want := range []string{"ttftop_probe_ttft_seconds_bucket", `model="` + sim.DemoHealthy + `"`, `result="success"`, "ttftop_probe_success"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%.2000s", want, body)
		}
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
}

// A recording's length prints as people write durations (README's
// conventions), not as Go's "6m3.359s" (QA).
func TestReplaySpanText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		6*time.Minute + 3359*time.Millisecond: "6m3s",
		90 * time.Minute:                      "1h30m",
		1500 * time.Microsecond:               "2ms",
		59*time.Second + 600*time.Millisecond: "1m",
	} {
		if got := spanText(d); got != want {
			t.Errorf("spanText(%v) = %q, want %q", d, got, want)
		}
	}
}
