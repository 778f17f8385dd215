// Command ttftop shows, live, how fast LLM inference endpoints answer.
// This package only wires flags to the packages that do the work.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand; each lives in its own cmd_*.go file and
// registers itself from init.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is filled by init functions only, before main runs.
var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// exitError carries a specific exit code (e.g. `check` exits 1 or 2).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e exitError) Unwrap() error { return e.err }

func main() {
	// Every way a session ends cancels the run, so a recording is flushed
	// and closed, the terminal restored and queued notifications get their
	// deadline: Ctrl-C, kill, and SIGHUP when the terminal or the SSH
	// session goes away.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A write to a closed stdout (headless output to an SSH session that
	// dropped, a closed pipe) must fail with EPIPE, which ends the view
	// and so the run, rather than kill the process with its recording
	// unfinished. Notified rather than ignored, so commands run for
	// alerts still get the default SIGPIPE.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	signal.Stop(sigpipe)
	os.Exit(code)
}

// run dispatches args to a subcommand and maps its error to an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	switch {
	case name == "help" || (name == "" && len(rest) > 0 && isHelpFlag(rest[0])):
		if len(rest) > 0 && name == "help" {
			if c, ok := commands[rest[0]]; ok {
				return exitCode(c.run(ctx, []string{"--help"}, stdout, stderr), stderr)
			}
		}
		usage(stdout)
		return 0
	case name == "" && len(rest) > 0 && (rest[0] == "--version" || rest[0] == "-version"):
		name, rest = "version", rest[1:]
	case name == "":
		name = "dashboard"
	}
	c, ok := commands[name]
	if !ok {
		if looksLikeURL(name) {
			c, ok = commands["dashboard"]
			rest = args
		}
	}
	if !ok {
		fmt.Fprintf(stderr, "ttftop: unknown command %q%s\nRun 'ttftop --help' for the commands.\n", name, didYouMean(name))
		return 2
	}
	err := c.run(ctx, rest, stdout, stderr)
	if isUsageError(err) {
		fmt.Fprintf(stderr, "ttftop %s: %v\nRun 'ttftop %s --help' for its flags.\n", c.name, err, c.name)
		return 2
	}
	return exitCode(err, stderr)
}

// isUsageError recognises a usageError and the flag package's parse
// errors (its messages are the API: it has no error types): both exit 2.
func isUsageError(err error) bool {
	if err == nil {
		return false
	}
	var ue usageError
	if errors.As(err, &ue) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined", "invalid value ", "invalid boolean value", "flag needs an argument", "bad flag syntax"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

func exitCode(err error, stderr io.Writer) int {
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, syscall.EPIPE):
		// The reader went away (`ttftop … --json | head`): the end of a
		// pipeline, not a failure to report.
		return 0
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "ttftop: %v\n", ee.err)
		}
		return ee.code
	default:
		fmt.Fprintf(stderr, "ttftop: %v\n", err)
		return 1
	}
}

// didYouMean suggests the command within two edits of name, if any.
func didYouMean(name string) string {
	best, bestD := "", 3
	for n := range commands {
		if d := editDistance(name, n); d < bestD || d == bestD && n < best {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of two short words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func isHelpFlag(s string) bool { return s == "-h" || s == "--help" || s == "-help" }

func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.Contains(s, ":")
}

func usage(w io.Writer) {
	fmt.Fprint(w, `ttftop shows, live, how fast LLM inference endpoints answer:
TTFT, TPOT, inter-token latency, tokens/s, GPU memory-bandwidth use and SLO breaches.

Usage:
  ttftop demo                      dashboard over the built-in simulator (offline)
  ttftop URL [URL...]              probe and scrape endpoints, open the dashboard
  ttftop                           the same for the engines found on this machine
  ttftop ssh://[user@]host[:port]  ... and for those found on a host, through one SSH connection
  ttftop <command> [flags]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'ttftop <command> --help' for a command's flags.
`)
}
