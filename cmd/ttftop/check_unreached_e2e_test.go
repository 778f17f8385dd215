//go:build integration

package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// An endpoint that cannot be reached leaves every objective unjudged: the
// built binary's summary counts them (3 not measured, one N/A row each),
// never "0 not measured" beside "could not measure" on stderr.
func TestCheckUnreachableCountsWhatItCouldNotMeasure(t *testing.T) {
	bin := buildTtftop(t)
	url := closedPortURL(t)
	cmd := exec.Command(bin, "check", url, "-n", "3", "--timeout", "5s")
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("err %v, want exit 2\n%s\n%s", err, out, stderr.String())
	}
	stdout := string(out)
	if !strings.Contains(stderr.String(), "could not measure "+url) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	for _, obj := range []string{"ttft-p95", "tpot-p95", "availability"} {
		if !hasRow(stdout, "N/A", obj, url, "not", "measured:", "connect:") {
			t.Errorf("no N/A row for %s:\n%s", obj, stdout)
		}
	}
	if !hasRow(stdout, "0", "passed,", "0", "failed,", "3", "not", "measured") {
		t.Errorf("summary does not count the unjudged objectives:\n%s", stdout)
	}
}
