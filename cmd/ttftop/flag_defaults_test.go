package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/probe"
)

// The flags' defaults are their owners' (internal/config's
// TestDefaultsAreTheirOwners asserts each owner's value once): an
// endpoint given on the command line is probed as the same endpoint
// written in a file without a probe block, the view flags start where a
// file without view keys does, and `ttftop probe` sends what a monitoring
// probe sends.
func TestFlagDefaultsAreTheOwners(t *testing.T) {
	const url = "http://127.0.0.1:9"
	file, err := config.Parse(strings.NewReader("endpoints:\n  - url: " + url + "\n"))
	if err != nil {
		t.Fatal(err)
	}

	fs := pflag.NewFlagSet("dashboard", pflag.ContinueOnError)
	var sf sourceFlags
	var vf viewFlags
	sf.bind(fs)
	vf.bind(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	flags, err := sf.load([]string{url})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *flags.Endpoints[0].Probe, *file.Endpoints[0].Probe; !reflect.DeepEqual(got, want) {
		t.Errorf("probe from the flags %+v, from a file %+v", got, want)
	}
	view := []struct {
		what        string
		flag, owner any
	}{
		{"theme", vf.theme, file.Theme},
		{"fps", vf.fps, file.FPS},
		{"refresh", vf.refresh, file.Refresh.D()},
		{"window", vf.window, file.Window.D()},
	}
	for _, v := range view {
		if v.flag != v.owner {
			t.Errorf("--%s defaults to %v, a file to %v", v.what, v.flag, v.owner)
		}
	}

	pc, err := parseWith(parseProbeArgs, url)
	if err != nil {
		t.Fatal(err)
	}
	p := file.Endpoints[0].Probe
	for _, d := range []struct {
		what        string
		flag, owner any
	}{
		{"-c", pc.opts.Concurrency, p.Concurrency},
		{"--prompt", pc.prompt, p.Prompt},
		{"--max-tokens", pc.opts.MaxTokens, p.MaxTokens},
		{"--timeout", pc.opts.Timeout, p.Timeout.D()},
		{"--stall-timeout", pc.opts.StallTimeout, p.StallTimeout.D()},
		{"--max-line-bytes", pc.opts.MaxLineBytes, probe.DefaultMaxLineBytes},
	} {
		if d.flag != d.owner {
			t.Errorf("probe %s defaults to %v, a monitoring probe to %v", d.what, d.flag, d.owner)
		}
	}

	// sweep and race send the same prompt unless told otherwise.
	sc, err := parseWith(parseSweepArgs, url)
	if err != nil {
		t.Fatal(err)
	}
	if sc.prompt != p.Prompt {
		t.Errorf("sweep --prompt defaults to %q, a monitoring probe to %q", sc.prompt, p.Prompt)
	}
	rc, err := parseWith(parseRaceArgs, url, "http://127.0.0.2:9")
	if err != nil {
		t.Fatal(err)
	}
	if rc.opts.Prompt != probe.BuiltinPrompts()[p.Prompt] {
		t.Errorf("race sends %.20q…, a monitoring probe the %q prompt", rc.opts.Prompt, p.Prompt)
	}
}

// parseWith binds a command's flags on a fresh set, parses no flags and
// reads the positional arguments as the command would.
func parseWith[C any](parse func(*pflag.FlagSet) func([]string) (C, error), positional ...string) (C, error) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	read := parse(fs)
	if err := fs.Parse(nil); err != nil {
		var zero C
		return zero, err
	}
	return read(positional)
}
