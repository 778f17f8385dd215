package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/internal/discover"
	"github.com/ttftop/ttftop/sources/probe"
)

// emptyMachine is a machine with no engine process, no GPU and no
// dcgm-exporter (an empty /proc), whose only well-known port is a busy
// HTTP server that is not an LLM server: what the shared test machine's
// other listeners cannot make nondeterministic.
func emptyMachine(t *testing.T) targetFlags {
	t.Helper()
	notLLM := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notLLM.Close)
	u, err := url.Parse(notLLM.URL)
	if err != nil {
		t.Fatal(err)
	}
	noSMI := func(string) (string, error) { return "", exec.ErrNotFound }
	return targetFlags{disc: discoverFlags{ports: u.Port(),
		machine: discover.Options{ProcRoot: t.TempDir(), DCGMPort: -1, LookPath: noSMI}}}
}

// TestNothingFoundSaysWhatWasLooked: with no target and nothing found,
// probe and check (targetFlags.find) and the monitoring commands
// (sourceFlags.load) fail with a usage error (exit 2) that says what was
// looked at and every way to give a target; the busy port was left alone.
func TestNothingFoundSaysWhatWasLooked(t *testing.T) {
	tf := emptyMachine(t)
	var probeErrs, monitorErrs strings.Builder
	_, probeErr := tf.find(nil, &probeErrs)
	var sweepErrs strings.Builder
	sweepTargets := emptyMachine(t)
	_, sweepErr := sweepTargets.findOne(probe.Options{}, nil, &sweepErrs)
	f := sourceFlags{interval: 1, targetFlags: emptyMachine(t)}
	f.req.maxTokens, f.req.timeout = 1, 1
	_, _, monitorErr := f.open(nil, &monitorErrs)
	for _, c := range []struct {
		cmd, port, stderr string
		err               error
	}{{"probe/check", tf.disc.ports, probeErrs.String(), probeErr},
		{"probe/sweep (one endpoint)", sweepTargets.disc.ports, sweepErrs.String(), sweepErr}, {"monitoring", f.disc.ports, monitorErrs.String(), monitorErr}} {
		var usage usageError
		if !errors.As(c.err, &usage) {
			t.Errorf("%s: %v: want a usage error (exit 2)", c.cmd, c.err)
			continue
		}
		want := fmt.Sprintf("no LLM server found on this machine (looked at 0 listening sockets, 0 processes (0 named like an engine), ports %s on loopback", c.port)
		if !strings.Contains(usage.msg, want) || !strings.HasSuffix(usage.msg, noTargetUsage) {
			t.Errorf("%s: %q\nwant it to say %q and end with the ways to give a target", c.cmd, usage.msg, want)
		}
		if left := fmt.Sprintf("ttftop: left alone 127.0.0.1:%s", c.port); !strings.Contains(c.stderr, left) {
			t.Errorf("%s: stderr %q: want %q", c.cmd, c.stderr, left)
		}
	}
}
