package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// helpFlag is one flag as `ttftop CMD --help` shows it.
type helpFlag struct {
	usage, def string
}

var (
	defaultRE = regexp.MustCompile(`^(.*) \(default (.*)\)$`)
	// flagLineRE is a flag's first line in pflag's layout: "  -n, --n int",
	// "      --api string", then two or more spaces and the help.
	flagLineRE = regexp.MustCompile(`^(?:  -[a-zA-Z], |      )--([a-z0-9-]+)(?: [^ ]+(?: [^ ]+)*)?(  +)`)
)

// helpFlags runs `ttftop cmd --help` and reads its flag list (pflag's
// layout: every flag with two dashes, its help in one column): what a
// user sees is what is tested.
func helpFlags(t *testing.T, cmd string) (map[string]helpFlag, string) {
	t.Helper()
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{cmd, "--help"}, &out, &errs); code != 0 {
		t.Fatalf("%s --help: exit %d\n%s", cmd, code, errs.String())
	}
	help := errs.String() + out.String()
	flags := map[string]helpFlag{}
	name, column := "", 0
	for _, line := range strings.Split(help, "\n") {
		if m := flagLineRE.FindStringSubmatchIndex(line); m != nil {
			name, column = line[m[2]:m[3]], m[1]
			flags[name] = helpFlag{usage: line[column:]}
			continue
		}
		if name != "" && len(line) > column && strings.TrimSpace(line[:column]) == "" {
			f := flags[name]
			f.usage += "\n" + line[column:]
			flags[name] = f
			continue
		}
		name = ""
	}
	for n, f := range flags {
		if m := defaultRE.FindStringSubmatch(f.usage); m != nil {
			flags[n] = helpFlag{usage: m[1], def: m[2]}
		}
	}
	if len(flags) < 2 && cmd != "version" {
		t.Fatalf("%s --help lists no flags but --help:\n%s", cmd, help)
	}
	return flags, help
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	return names
}

// The same flag has the same help text and default in every command that
// has it. Exceptions, each for a reason: --listen (each server has its
// own port; all default to loopback, which TestListenDefaultsToLoopback
// checks), sim's --model (the simulator serves models; the other
// commands request one), sweep's --max-rpm (a closed loop's start-rate
// ceiling grows with its --max-concurrency, docs/sweep.md; its help says
// so) and the default of demo's --window (the demo starts at 1m so that
// its 45 s breach shows, and its help says so).
func TestSameFlagSameMeaning(t *testing.T) {
	exempt := map[string]func(cmd string) bool{
		"listen":  func(string) bool { return true },
		"model":   func(cmd string) bool { return cmd == "sim" },
		"max-rpm": func(cmd string) bool { return cmd == "sweep" },
	}
	exemptDefault := map[string]func(cmd string) bool{
		"window": func(cmd string) bool { return cmd == "demo" },
	}
	type seen struct {
		cmd string
		f   helpFlag
	}
	first := map[string]seen{}
	for _, cmd := range commandNames() {
		flags, _ := helpFlags(t, cmd)
		for name, f := range flags {
			if ex := exempt[name]; ex != nil && ex(cmd) {
				continue
			}
			ownDefault := exemptDefault[name] != nil && exemptDefault[name](cmd)
			s, ok := first[name]
			if !ok && !ownDefault {
				first[name] = seen{cmd, f}
				continue
			}
			if !ok {
				continue // the others are compared with each other
			}
			if s.f.usage != f.usage {
				t.Errorf("--%s: help differs\n  %s: %s\n  %s: %s", name, s.cmd, s.f.usage, cmd, f.usage)
			}
			if !ownDefault && s.f.def != f.def {
				t.Errorf("--%s: default differs: %s %q, %s %q", name, s.cmd, s.f.def, cmd, f.def)
			}
		}
	}
	// The renamed ones are gone where they would mean something else.
	probeFlags, _ := helpFlags(t, "probe")
	for _, old := range []string{"seed", "interval"} {
		if _, ok := probeFlags[old]; ok {
			t.Errorf("probe still has --%s, another command's flag", old)
		}
	}
}

func TestListenDefaultsToLoopback(t *testing.T) {
	for _, cmd := range commandNames() {
		flags, _ := helpFlags(t, cmd)
		for name, f := range flags {
			if name != "listen" && !strings.HasSuffix(name, "-listen") {
				continue
			}
			if !strings.HasPrefix(f.def, `"127.0.0.1:`) || !strings.Contains(f.usage, "loopback") {
				t.Errorf("%s --%s: default %s, help %q: want a loopback default, said", cmd, name, f.def, f.usage)
			}
		}
	}
}

// Every command that sends requests takes the same request flags, and
// --api lists every protocol the probe speaks.
func TestRequestFlagsEverywhere(t *testing.T) {
	want := []string{"api", "model", "max-tokens", "timeout", "api-key-env", "api-key-file", "ca-file", "insecure", "header", "no-usage"}
	for _, cmd := range []string{"probe", "check", "dashboard", "snapshot", "exporter", "serve", "race"} {
		flags, _ := helpFlags(t, cmd)
		for _, name := range want {
			if _, ok := flags[name]; !ok {
				t.Errorf("%s lacks --%s", cmd, name)
			}
		}
		if !strings.Contains(flags["api"].usage, "triton") {
			t.Errorf("%s --api does not list triton: %q", cmd, flags["api"].usage)
		}
	}
}

// --json has one meaning, said the same way, everywhere it exists; and
// the README says it too.
func TestOneMeaningOfJSON(t *testing.T) {
	n := 0
	for _, cmd := range commandNames() {
		flags, _ := helpFlags(t, cmd)
		if f, ok := flags["json"]; ok {
			n++
			if f.usage != jsonUsage || f.def != "" {
				t.Errorf("%s --json: %q (default %q)", cmd, f.usage, f.def)
			}
		}
	}
	if n < 6 {
		t.Errorf("--json in %d commands; dashboard, demo, snapshot, check, probe and replay have it", n)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "one JSON document for a command that finishes, one JSON object per line for one that streams") {
		t.Error("README does not state the one meaning of --json")
	}
}

// goDuration is Go's time.Duration.String style with trailing zero units
// (1m0s, 5m0s, 1h0m0s) or a bare 0s default.
var goDuration = regexp.MustCompile(`\d+[hm]0s\b|\d+h0m\b|\(default 0s\)|\b0s\b`)

func TestHelpHasNoGoDurations(t *testing.T) {
	for _, cmd := range commandNames() {
		_, help := helpFlags(t, cmd)
		for _, line := range strings.Split(help, "\n") {
			if goDuration.MatchString(line) {
				t.Errorf("%s --help: Go-style duration in %q", cmd, line)
			}
		}
	}
}

// Every usage error, in every command, exits 2 with one line saying it
// and one pointing to --help: never the whole flag list.
func TestEveryUsageErrorExits2InOneLine(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no default config file
	// No target runs discovery, which may find something on this machine:
	// the no-target cases say --no-discover.
	cases := map[string][][]string{
		"probe": {{"--no-discover"}, {"http://127.0.0.1:1", "ssh://box"}, {"http://127.0.0.1:1", "-n", "0"}, {"http://127.0.0.1:1", "--json", "--csv"},
			{"http://127.0.0.1:1", "--seed", "1"}, {"http://127.0.0.1:1", "--interval", "1s"},
			{"http://127.0.0.1:1", "http://127.0.0.1:2", "-c", "2"}, {"http://127.0.0.1:1", "--max-tokens", "0"},
			{"http://127.0.0.1:1", "--timeout", "0"}, {"http://127.0.0.1:1", "--header", "broken"},
			{"http://127.0.0.1:1", "--api-key-env", "A", "--api-key-file", "B"}, {"http://127.0.0.1:1", "--timeout", "soon"}},
		"check":     {{"--no-discover"}, {"--discover-ports", "80,http"}, {"http://127.0.0.1:1", "-n", "0"}, {"http://127.0.0.1:1", "--slo-ttft", "fast"}, {"http://127.0.0.1:1", "--timeout", "0"}},
		"snapshot":  {{"http://127.0.0.1:1", "--duration", "0"}, {"http://127.0.0.1:1", "--text", "--json"}, {"--no-discover"}},
		"dashboard": {{"--json", "--no-discover"}, {"http://127.0.0.1:1", "--interval", "0"}, {"--discover-ports", "80,http"}},
		"exporter":  {{"--no-discover"}},
		"demo":      {{"extra"}},
		"serve":     {{"--no-discover"}, {"--ssh", "--max-sessions", "0"}, {"--ssh", "--demo", "http://127.0.0.1:1"}},
		"replay":    {{}, {"a", "b"}},
		"race": {{}, {"http://127.0.0.1:1", "http://127.0.0.1:2", "--rounds", "0"}, {"model-first", "http://127.0.0.1:1"},
			{"http://127.0.0.1:1", "--model", "m"}, {"http://127.0.0.1:1", "http://127.0.0.1:2", "--max-tokens", "0"}},
		"sim":     {{"extra"}, {"--model", ""}},
		"version": {{"extra"}},
		"sweep": {{"--no-discover"}, {"http://127.0.0.1:1", "ssh://box"}, {"http://127.0.0.1:1", "--max-tokens", "0"}, {"http://127.0.0.1:1", "--keda-window", "soon"},
			{"http://127.0.0.1:1", "--max-step-time", "1m0x"}},
	}
	for _, cmd := range commandNames() {
		if _, ok := cases[cmd]; !ok {
			t.Errorf("no usage-error case for %s: add one", cmd)
		}
	}
	for cmd, list := range cases {
		for _, args := range list {
			var out, errs bytes.Buffer
			code := run(context.Background(), append([]string{cmd}, args...), &out, &errs)
			lines := strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n")
			if code != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], "ttftop "+cmd+": ") ||
				lines[1] != "Run 'ttftop "+cmd+" --help' for its flags." || out.Len() != 0 {
				t.Errorf("%s %q: exit %d\nstdout %q\nstderr %q", cmd, args, code, out.String(), errs.String())
			}
		}
	}
}

// durationFlag prints as Prometheus does and reads both Go's and
// Prometheus' forms.
func TestDurationFlag(t *testing.T) {
	for in, want := range map[string]string{"1m0s": "1m", "90s": "1m30s", "5m": "5m", "1h": "1h", "28d": "28d", "250ms": "250ms", "0": ""} {
		var v time.Duration
		d := durationFlag{&v}
		if err := d.Set(in); err != nil {
			t.Errorf("Set(%q): %v", in, err)
			continue
		}
		if got := d.String(); got != want {
			t.Errorf("Set(%q).String() = %q, want %q", in, got, want)
		}
	}
	var v time.Duration
	if err := (durationFlag{&v}).Set("soon"); err == nil {
		t.Error("Set(soon) accepted")
	}
	if (durationFlag{}).String() != "" {
		t.Error("a zero durationFlag prints something")
	}
}
