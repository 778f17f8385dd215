//go:build integration

package failuresuite

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCheckTwoModels is Proof 7: `check` on a server with two models, the
// second slowed tenfold (TPOT ~120 ms against the default 50 ms
// objective) → exit 1, a line for each model, the slow one's TPOT FAIL
// and the fast one's TPOT PASS.
func TestCheckTwoModels(t *testing.T) {
	t.Parallel()
	sim := startSim(t, "127.0.0.1:0", "--model", "fast-m:1b", "--model", "slow-m:1b", "--load", "0",
		"--event", "bandwidth@0s,factor=0.1,model=slow-m")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, ttftopBinary(t), "check", sim.url, "-n", "3", "--max-tokens", "16")
	cmd.Env = append(os.Environ(), isolatedEnv(t)...)
	var stdout, stderr lineLog
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("check: %v", err)
	}
	out := stdout.Text()
	t.Logf("check exited %d after %s:\n%s%s", code, secs(took), out, stderr.Text())
	measured(t, "check-two-models", map[string]time.Duration{"took": took}, "took")
	if code != 1 {
		t.Errorf("check exited %d, want 1 (an objective failed)", code)
	}
	fast, slow := sim.addr+"/fast-m", sim.addr+"/slow-m"
	if !resultLine(out, "FAIL", slow, "tpot") {
		t.Errorf("no FAIL line for the TPOT objective of %s", slow)
	}
	if !resultLine(out, "PASS", fast, "tpot") {
		t.Errorf("no PASS line for the TPOT objective of %s", fast)
	}
	if resultLine(out, "FAIL", fast, "tpot") || resultLine(out, "PASS", slow, "tpot") {
		t.Errorf("a model's TPOT verdict is the other's")
	}
}

// resultLine reports whether check printed a line with the verdict, the
// endpoint and an objective starting with objective ("tpot-p95").
func resultLine(out, verdict, endpoint, objective string) bool {
	for _, ln := range strings.Split(out, "\n") {
		f := strings.Fields(ln)
		if len(f) < 3 || f[0] != verdict {
			continue
		}
		named, judged := false, false
		for _, w := range f[1:] {
			named = named || w == endpoint
			judged = judged || strings.HasPrefix(w, objective)
		}
		if named && judged {
			return true
		}
	}
	return false
}
