package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
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
		want := "ttftop " + cmd + ": unknown flag: --no-such-flag\nRun 'ttftop " + cmd + " --help' for its flags.\n"
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

// A mistyped or guessed flag is a usage error (exit 2) that names the flag
// meant: the nearest name, a synonym's flag, a renamed flag's new name,
// the two-dash form of a long flag typed with one.
func TestUnknownFlagSuggests(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--intervall", "2s"}, "ttftop dashboard: unknown flag: --intervall (did you mean --interval?)"},
		{[]string{"dashboard", "--alertmanager", "http://127.0.0.1:9093"}, "ttftop dashboard: unknown flag: --alertmanager (did you mean --webhook?)"},
		{[]string{"probe", "--concurrency", "4", "http://127.0.0.1:1"}, "ttftop probe: unknown flag: --concurrency (did you mean -c?)"},
		{[]string{"check", "--requests", "4"}, "ttftop check: unknown flag: --requests (did you mean -n?)"},
		{[]string{"snapshot", "--jsn"}, "ttftop snapshot: unknown flag: --jsn (did you mean --json?)"},
		{[]string{"probe", "-json"}, "ttftop probe: unknown shorthand flag: 'j' in -json (did you mean --json? long flags take two dashes)"},
		{[]string{"probe", "--seed", "1"}, "ttftop probe: --seed was renamed --sample-seed"},
		// No flag near: no guess. Not the synonym where the command lacks its flag.
		{[]string{"probe", "--zzzzzz"}, "ttftop probe: unknown flag: --zzzzzz\n"},
		{[]string{"probe", "--x"}, "ttftop probe: unknown flag: --x\n"},
		{[]string{"sim", "--alertmanager", "x"}, "ttftop sim: unknown flag: --alertmanager\n"},
		{[]string{"completion", "nosh"}, `ttftop completion: no completion for "nosh": bash, zsh, fish or powershell`},
	}
	for _, c := range cases {
		var out, errs bytes.Buffer
		code := run(context.Background(), c.args, &out, &errs)
		if code != 2 || !strings.HasPrefix(errs.String(), c.want) || strings.Count(errs.String(), "\n") != 2 || out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2, %q", c.args, code, errs.String(), c.want)
		}
	}
}

// --help is the pflag way: every flag with two dashes, on stdout.
func TestHelpShowsTwoDashFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"probe", "--help"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	help := out.String()
	for _, want := range []string{"\n      --api string ", "\n  -n, --n int ", "\n  -c, --c int ", "\n      --slo-ttft duration "} {
		if !strings.Contains(help, want) {
			t.Errorf("probe --help lacks %q:\n%s", want, help)
		}
	}
	if regexp.MustCompile(`(?m)^  -[a-z][a-z-]+ `).MatchString(help) {
		t.Errorf("probe --help shows a one-dash long flag:\n%s", help)
	}
}
