//go:build integration

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// `ttftop sim --pd` runs a P/D deployment on its own: the addresses it
// prints are the router and the workers of each role, and the config it
// writes is all `ttftop snapshot` needs to show both pools, with the
// link --kv-bandwidth set, and the router's row.
func TestSimPDServesPools(t *testing.T) {
	bin := buildTtftop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfgPath := filepath.Join(t.TempDir(), "pd.yaml")
	// 0.5 GB/s: a ~400-token prompt of an 8B model (128 KiB of KV per
	// token) takes ~100 ms to move; at the default 10 GB/s, ~7 ms.
	sim := exec.CommandContext(ctx, bin, "sim", "--pd", "--listen", "127.0.0.1:0", "--model", "org/pd-8b:8b",
		"--load", "4", "--kv-bandwidth", "0.5", "--write-config", cfgPath)
	served := readPDBanner(t, startUntilTestEnds(t, sim, sim.StderrPipe))
	if len(served["router"]) != 1 || len(served["prefill"]) != 1 || len(served["decode"]) != 2 {
		t.Fatalf("banner served %v; want 1 router, 1 prefill and 2 decode workers", served)
	}

	out, err := exec.CommandContext(ctx, bin, "snapshot", "--config", cfgPath, "--duration", "10s", "--json").Output()
	if err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
	var snap telemetry.Snapshot
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatalf("snapshot JSON: %v\n%.500s", err, out)
	}
	models := telemetry.PDModels(snap)
	if len(models) != 1 || models[0].Model != "org/pd-8b" {
		t.Fatalf("disaggregated models %+v, want org/pd-8b", models)
	}
	m := models[0]
	if m.PrefillWorkers != 1 || m.DecodeWorkers != 2 || m.PrefillUp != 1 || m.DecodeUp != 2 || len(m.Routers) != 1 {
		t.Fatalf("%d/%d prefill, %d/%d decode workers up, %d routers; want 1/1, 2/2, 1",
			m.PrefillUp, m.PrefillWorkers, m.DecodeUp, m.DecodeWorkers, len(m.Routers))
	}
	// Each pool's rows are the workers the banner gave that role.
	for role, rows := range map[string][]telemetry.EndpointSnapshot{"prefill": m.Prefill, "decode": m.Decode, "router": m.Routers} {
		for _, es := range rows {
			if !servedAs(served[role], es.Name) {
				t.Errorf("%s row %s is none of the banner's %s addresses %v", role, es.Name, role, served[role])
			}
		}
	}
	parts, ok := m.TTFTParts()
	if !ok || parts.Prefill <= 0 || parts.FirstDecode <= 0 || parts.Router == nil || *parts.Router <= 0 {
		t.Fatalf("TTFT parts %+v (%v), want every part and the router's TTFT", parts, ok)
	}
	if parts.KVTransfer < 30 {
		t.Errorf("decode pool's KV transfer mean %.2f ms; at --kv-bandwidth 0.5 GB/s it takes ~100 ms", parts.KVTransfer)
	}
	t.Logf("parts: queue %.2f + prefill %.2f + KV %.2f + first decode %.2f = %.2f ms; router %.2f ms",
		parts.PrefillQueue, parts.Prefill, parts.KVTransfer, parts.FirstDecode, parts.Sum, *parts.Router)
}

// startUntilTestEnds starts cmd, killed when the test ends, and returns
// the stream pipe opens (cmd.StdoutPipe or cmd.StderrPipe).
func startUntilTestEnds(t *testing.T, cmd *exec.Cmd, pipe func() (io.ReadCloser, error)) io.Reader {
	t.Helper()
	r, err := pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return r
}

var pdBannerLine = regexp.MustCompile(`^\s+(router|prefill|decode)\s+(http://127\.0\.0\.1:[0-9]+)\s`)

// readPDBanner reads `sim --pd`'s banner up to its last line and returns
// the URLs it printed by role.
func readPDBanner(t *testing.T, r io.Reader) map[string][]string {
	t.Helper()
	served := map[string][]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := pdBannerLine.FindStringSubmatch(sc.Text()); m != nil {
			served[m[1]] = append(served[m[1]], m[2])
		}
		if strings.HasPrefix(sc.Text(), "Press Ctrl-C") {
			go func() { // keep draining
				for sc.Scan() {
				}
			}()
			return served
		}
	}
	t.Fatalf("sim --pd ended before its banner did (%v); read %v", sc.Err(), served)
	return nil
}

// servedAs reports whether a row's name (host:port/model) is one of urls.
func servedAs(urls []string, name string) bool {
	for _, u := range urls {
		if p, err := url.Parse(u); err == nil && strings.HasPrefix(name, p.Host+"/") {
			return true
		}
	}
	return false
}
