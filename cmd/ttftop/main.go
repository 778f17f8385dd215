// Command ttftop shows, live, how fast LLM inference endpoints answer.
// This package only wires flags to the packages that do the work.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// command is one subcommand; each lives in its own cmd_*.go file. bind
// declares its flags on the command's flag set and returns what runs once
// they are parsed, with the positional arguments.
type command struct {
	name    string
	summary string
	usage   string // the help's text: usage lines, then what it does
	bind    func(fs *pflag.FlagSet) runFunc
	renamed renamedFlags // old flag names a usage error explains
}

type runFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// parsed is the bind of a command whose flags and arguments parse into a
// config (parse binds the flags and returns the parser) that run runs.
func parsed[C any](parse func(*pflag.FlagSet) func([]string) (C, error), run func(context.Context, C, io.Writer, io.Writer) error) func(*pflag.FlagSet) runFunc {
	return func(fs *pflag.FlagSet) runFunc {
		parseArgs := parse(fs)
		return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			cfg, err := parseArgs(args)
			if err != nil {
				return err
			}
			return run(ctx, cfg, stdout, stderr)
		}
	}
}

// commands are every subcommand, in no particular order (help sorts).
func commands() []command {
	return []command{checkCommand(), dashboardCommand(), demoCommand(), exporterCommand(), probeCommand(), raceCommand(),
		replayCommand(), serveCommand(), simCommand(), snapshotCommand(), sweepCommand(), versionCommand()}
}

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

const rootUsage = `ttftop shows, live, how fast LLM inference endpoints answer:
TTFT, TPOT, inter-token latency, tokens/s, GPU memory-bandwidth use and SLO breaches.

  ttftop demo                      dashboard over the built-in simulator (offline)
  ttftop URL [URL...]              probe and scrape endpoints, open the dashboard
  ttftop                           the same for the engines found on this machine
  ttftop ssh://[user@]host[:port]  ... and for those found on a host, through one SSH connection
  ttftop <command> [flags]`

// subcommandHelp is a command's --help: its usage lines, its flags the
// pflag way (--name type   help (default ...)), then what it does.
const subcommandHelp = `Usage: {{index .Annotations "usage"}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}
{{with .Long}}
{{.}}
{{end}}`

// newRoot builds the command tree for one run: every command's flags are
// bound afresh, so nothing outlives the run.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "ttftop", Long: rootUsage, SilenceErrors: true, SilenceUsage: true}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.Flags().BoolP("help", "h", false, "show this help")
	root.SuggestionsMinimumDistance = 2
	for _, c := range commands() {
		lines, about, _ := strings.Cut(c.usage, "\n\n")
		cmd := &cobra.Command{Use: c.name, Short: c.summary, Long: about, SilenceErrors: true, SilenceUsage: true,
			Annotations: map[string]string{"usage": lines}}
		cmd.Flags().BoolP("help", "h", false, "show this help")
		runner := c.bind(cmd.Flags())
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			return runner(cmd.Context(), args, stdout, stderr)
		}
		cmd.SetFlagErrorFunc(flagError(c.renamed))
		cmd.SetHelpTemplate(subcommandHelp)
		root.AddCommand(cmd)
	}
	root.SetHelpFunc(helpTo(root.HelpFunc(), stdout, stderr))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion":
			c.Short = "print a shell completion script: bash, zsh, fish or powershell (docs/cli.md)"
			c.Args = cobra.ArbitraryArgs // an unknown shell reaches RunE
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 { // exits 2, as every wrong command line
					return usagef("no completion for %q: bash, zsh, fish or powershell", args[0])
				}
				return cmd.Help()
			}
		case "help":
			c.Short = "help about any command"
		}
	}
	return root
}

// helpTo writes the help as one block, and when the reader has gone
// (`ttftop probe --help | head`) says nothing: it read what it wanted.
func helpTo(help func(*cobra.Command, []string), stdout, stderr io.Writer) func(*cobra.Command, []string) {
	return func(c *cobra.Command, args []string) {
		var b bytes.Buffer
		c.SetOut(&b)
		help(c, args)
		c.SetOut(stdout)
		if _, err := stdout.Write(b.Bytes()); err != nil && !errors.Is(err, syscall.EPIPE) {
			fmt.Fprintf(stderr, "ttftop: %v\n", err)
		}
	}
}

// run dispatches args to a subcommand and maps its error to an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	args, err := dashboardByDefault(root, args)
	if err != nil {
		fmt.Fprintf(stderr, "ttftop: %v\nRun 'ttftop --help' for the commands.\n", err)
		return 2
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if isUsageError(err) {
		fmt.Fprintf(stderr, "ttftop %s: %v\nRun 'ttftop %s --help' for its flags.\n", cmd.Name(), err, cmd.Name())
		return 2
	}
	return exitCode(err, stderr)
}

// dashboardByDefault makes the dashboard the command when none is named:
// `ttftop`, `ttftop URL...`, `ttftop --flag...`. A word that is neither a
// command nor a URL is an unknown command, with the nearest one suggested.
func dashboardByDefault(root *cobra.Command, args []string) ([]string, error) {
	if len(args) == 0 {
		return []string{"dashboard"}, nil
	}
	first := args[0]
	switch {
	case first == "--version" || first == "-version":
		return append([]string{"version"}, args[1:]...), nil
	case first == "-h" || first == "--help" || first == "-help":
		return []string{"--help"}, nil
	case strings.HasPrefix(first, "-"):
		return append([]string{"dashboard"}, args...), nil
	case first == cobra.ShellCompRequestCmd || first == cobra.ShellCompNoDescRequestCmd:
		return args, nil
	}
	for _, c := range root.Commands() {
		if c.Name() == first || c.HasAlias(first) {
			return args, nil
		}
	}
	if looksLikeURL(first) {
		return append([]string{"dashboard"}, args...), nil
	}
	msg := fmt.Sprintf("unknown command %q", first)
	if s := root.SuggestionsFor(first); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return nil, errors.New(msg)
}

// isUsageError recognises a wrong command line: a usageError (flag
// errors are made one by flagError) or cobra's own argument errors.
func isUsageError(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

func exitCode(err error, stderr io.Writer) int {
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, pflag.ErrHelp):
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

func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.Contains(s, ":")
}
