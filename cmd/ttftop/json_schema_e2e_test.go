//go:build integration

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/schematest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/internal/syncbuf"
)

// What the commands really print matches docs/schema/ttftop-v1.schema.json:
// snapshot of a simulator, check, probe --json and --jsonl, and the
// dashboard's --json lines (TestDocumentMatchesSchema fails on a field
// renamed back; here the real paths are held to the same schema).
func TestCommandsJSONMatchesSchema(t *testing.T) {
	url := startSim(t, model(sim.DemoHealthy))
	t.Run("snapshot", func(t *testing.T) {
		code, out, errs := runCmd(t, "snapshot", url, "--duration", "3s", "--interval", "500ms", "--max-tokens", "16", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		schematest.Validate(t, "snapshot", []byte(out))
	})
	t.Run("check", func(t *testing.T) {
		code, out, errs := runCmd(t, "check", url, "-n", "3", "--max-tokens", "16", "--slo-ttft", "5s", "--slo-error-rate", "10%", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, out, errs)
		}
		schematest.Validate(t, "check", []byte(out))
	})
	t.Run("probe", func(t *testing.T) {
		code, out, errs := runCmd(t, "probe", url, "-n", "2", "--max-tokens", "16", "--slo-ttft", "5s", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		schematest.Validate(t, "probe", []byte(out))
		code, out, errs = runCmd(t, "probe", url, "-n", "2", "--max-tokens", "16", "--jsonl")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 3 {
			t.Fatalf("exit %d, %d lines: %s\n%s", code, len(lines), out, errs)
		}
		for _, l := range lines[:2] {
			schematest.Validate(t, "probe_request", []byte(l))
		}
		schematest.Validate(t, "probe", []byte(lines[2]))
	})
	t.Run("dashboard", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb syncbuf.Buffer
		done := make(chan int, 1)
		go func() { done <- run(ctx, []string{"dashboard", url, "--json", "--refresh", "500ms"}, &out, &errb) }()
		// Two whole lines, the second after the first probes (polled: the
		// refreshes are the dashboard's own).
		deadline := time.Now().Add(time.Minute)
		for strings.Count(out.String(), "\n") < 3 && time.Now().Before(deadline) {
			select {
			case code := <-done:
				t.Fatalf("dashboard ended (exit %d): %s", code, errb.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
		cancel()
		<-done
		lines := bytes.Split(bytes.TrimSpace([]byte(out.String())), []byte("\n"))
		if len(lines) < 3 {
			t.Fatalf("%d lines in a minute: %s", len(lines), errb.String())
		}
		for _, l := range lines[:3] {
			schematest.Validate(t, "snapshot", l)
		}
	})
}
