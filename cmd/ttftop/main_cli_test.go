package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestUnknownCommandSuggests(t *testing.T) {
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"probee"}, &out, &errs)
	if code != 2 || !strings.Contains(errs.String(), `unknown command "probee" (did you mean "probe"?)`) ||
		strings.Count(errs.String(), "\n") != 2 {
		t.Errorf("exit %d, stderr %q", code, errs.String())
	}
	errs.Reset()
	if code := run(context.Background(), []string{"zzzzzz"}, &out, &errs); code != 2 || strings.Contains(errs.String(), "did you mean") {
		t.Errorf("exit %d, stderr %q", code, errs.String())
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--version"}, &out, &errs); code != 0 || !strings.Contains(out.String(), "ttftop") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errs.String())
	}
}

// A usage error, in every command: exit 2, one line saying it, one
// pointing to --help, and not the whole flag list.
func TestUsageErrorsExit2InOneLine(t *testing.T) {
	for _, cmd := range []string{"dashboard", "demo", "snapshot", "check", "probe", "exporter", "serve", "replay", "sim", "version"} {
		var out, errs bytes.Buffer
		code := run(context.Background(), []string{cmd, "--no-such-flag"}, &out, &errs)
		want := "ttftop " + cmd + ": flag provided but not defined: -no-such-flag\nRun 'ttftop " + cmd + " --help' for its flags.\n"
		if code != 2 || errs.String() != want {
			t.Errorf("%s: exit %d, stderr %q", cmd, code, errs.String())
		}
	}
}

// demo --json writes only JSON lines to stdout; the banner goes to stderr.
func TestDemoJSONStdoutIsOnlyJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for a few seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var out, errs bytes.Buffer
	run(ctx, []string{"demo", "--json", "--refresh", "500ms"}, &out, &errs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("stdout: %q\nstderr: %q", out.String(), errs.String())
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON on stdout: %.80q", l)
		}
	}
	if !strings.Contains(errs.String(), "ttftop demo: simulator on http://127.0.0.1:") {
		t.Errorf("banner not on stderr: %q", errs.String())
	}
}
