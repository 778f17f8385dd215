package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/sshserve"
	"github.com/ttftop/ttftop/tui"
)

func serveCommand() command {
	return command{name: "serve", summary: "serve the dashboard, read-only, over SSH (--ssh) to a team", usage: serveUsage, bind: runServe}
}

const serveUsage = `ttftop serve --ssh [URL...] [--config FILE | --prometheus URL | --scrape URL | --demo] [flags]

Runs the sources once and serves the live dashboard over SSH, so a team can
'ssh -p 2222 HOST' and watch without installing anything. Each session has
its own view (sorting, selection, theme, size); all share the same data.

Public-key authentication only, from --authorized-keys (re-read when it
changes). No shell, no commands, no forwarding; sessions need a terminal.
The host key is created on first start and kept in --host-key.
--webhook and --on-alert notify once for the server (not per session);
delivery failures are said on stderr; --bell rings in every session.`

// serveFlags are the SSH server's own flags.
type serveFlags struct {
	ssh            bool
	demo           bool
	seed           int64
	listen         string
	authorizedKeys string
	hostKey        string
	idle           time.Duration
	maxDuration    time.Duration
	maxSessions    int
}

func (f *serveFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&f.ssh, "ssh", false, "serve the dashboard over SSH (the only mode)")
	fs.BoolVar(&f.demo, "demo", false, demoFlagUsage)
	fs.Int64Var(&f.seed, "seed", 1, simSeedUsage)
	fs.StringVar(&f.listen, "listen", sshserve.DefaultListen, "address to listen on (loopback by default; a non-loopback address is warned about)")
	fs.StringVar(&f.authorizedKeys, "authorized-keys", "", "OpenSSH authorized_keys file of who may watch (default ~/.ssh/authorized_keys)")
	fs.StringVar(&f.hostKey, "host-key", "", "host key file, created if missing (default $XDG_DATA_HOME/ttftop/ssh_host_ed25519_key)")
	durationVar(fs, &f.idle, "idle-timeout", sshserve.DefaultIdleTimeout, "close a session after this long without input (negative: never)")
	durationVar(fs, &f.maxDuration, "max-duration", sshserve.DefaultMaxDuration, "close a session this long after it began (negative: never)")
	fs.IntVar(&f.maxSessions, "max-sessions", sshserve.DefaultMaxSessions, "most concurrent viewers; more are told 'too many viewers'")
}

// sessionViewFlags are the dashboard's display flags that make sense as
// every session's starting view (not --json): bound from viewFlags so
// names, defaults and merging with the config stay the dashboard's.
func sessionViewFlags(fs *pflag.FlagSet, vf *viewFlags) {
	all := pflag.NewFlagSet("view", pflag.ContinueOnError)
	vf.bind(all)
	for _, name := range []string{"theme", "ascii", "fps", "refresh", "window", "bell"} {
		fs.AddFlag(all.Lookup(name))
	}
}

func runServe(fs *pflag.FlagSet) runFunc {
	var sf sourceFlags
	var vf viewFlags
	var sv serveFlags
	sf.bind(fs)
	sessionViewFlags(fs, &vf)
	sv.bind(fs)
	return func(ctx context.Context, urls []string, stdout, stderr io.Writer) error {
		if !sv.ssh {
			return usagef("give --ssh (the only way to serve for now)")
		}
		if sv.maxSessions < 1 {
			return usagef("--max-sessions must be at least 1")
		}
		if sv.demo && (len(urls) > 0 || sf.configPath != "" || len(sf.prometheus)+len(sf.scrape)+len(sf.dcgm) > 0) {
			return usagef("--demo serves the built-in simulator and takes no sources")
		}
		m, c, stopSim, err := serveMonitor(ctx, &sf, sv, urls, stderr)
		if err != nil {
			return err
		}
		defer stopSim()
		vf.merge(fs, c)
		m.ViewWindow(vf.window) // PromQL backfills it
		srv, err := sshserve.New(m.Store, m.SLO, sshserve.Options{
			Listen: sv.listen, AuthorizedKeys: orDefault(sv.authorizedKeys, defaultAuthorizedKeys),
			HostKey: orDefault(sv.hostKey, defaultHostKey), IdleTimeout: sv.idle, MaxDuration: sv.maxDuration,
			MaxSessions: sv.maxSessions, Logger: slog.New(slog.NewTextHandler(stderr, nil)),
			View: tui.Options{Theme: vf.theme, ASCII: vf.ascii, FPS: vf.fps, Refresh: vf.refresh, Window: vf.window,
				Bell: vf.bell, Thresholds: thresholds(m.SLO), OnWindow: m.ViewWindow},
		})
		if err != nil {
			return err
		}
		if err := srv.Listen(); err != nil {
			return err
		}
		// A diagnostic, on stderr as every other: stdout stays for output.
		fmt.Fprintf(stderr, "ttftop: serving the dashboard over SSH on %s (host key %s)\n", srv.Addr(), srv.HostKeyFingerprint())
		return serveSSH(ctx, m, c, srv, stderr)
	}
}

// serveMonitor builds the monitor: the demo simulator's (as `ttftop
// demo` wires it) or the configured sources'. stop closes the simulator.
func serveMonitor(ctx context.Context, sf *sourceFlags, sv serveFlags, urls []string, stderr io.Writer) (*monitor.Monitor, *config.Config, func(), error) {
	noop := func() {}
	if !sv.demo {
		m, c, err := sf.open(urls, stderr)
		return m, c, noop, err
	}
	s, m, c, err := startDemo(ctx, sv.seed, false)
	if err != nil {
		return nil, nil, noop, err
	}
	sf.notify.apply(&c.Notify)
	stop := func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(stderr, "ttftop: demo simulator: %v\n", err)
		}
	}
	return m, c, stop, nil
}

// serveSSH runs the monitor, its notifications and the SSH server until
// ctx ends; the sessions are closed before the sources stop. The server's
// own terminal shows no dashboard: notification trouble goes to stderr.
func serveSSH(ctx context.Context, m *monitor.Monitor, c *config.Config, srv *sshserve.Server, stderr io.Writer) error {
	return runMonitor(ctx, m, c.Notify, stderr, srv.Serve)
}

func orDefault(v string, def func() string) string {
	if v != "" {
		return v
	}
	return def()
}

// defaultAuthorizedKeys is the user's own ~/.ssh/authorized_keys: who may
// ssh into this account may watch; "" (an error later) without a home.
func defaultAuthorizedKeys() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".ssh", "authorized_keys")
}

// defaultHostKey is $XDG_DATA_HOME/ttftop/ssh_host_ed25519_key (or
// ~/.local/share/…): state, not configuration.
func defaultHostKey() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "ttftop", "ssh_host_ed25519_key")
}
