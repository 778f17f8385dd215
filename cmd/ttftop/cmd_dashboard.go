package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/report"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui"
)

func dashboardCommand() command {
	return command{name: "dashboard", summary: "the live dashboard ('ttftop URL...' is short for 'ttftop dashboard URL...')", usage: dashboardUsage, bind: runDashboard}
}

const dashboardUsage = `ttftop [dashboard] URL [URL...] [flags]
       ttftop dashboard --config FILE | --prometheus URL | --scrape URL [flags]
       ttftop [dashboard] [ssh://[user@]host[:port]...] [flags]

With no target it looks for this machine's engines (processes, listening
sockets, --discover-ports), and with ssh:// targets for each host's, through
one SSH connection; each is fingerprinted with GETs before it is probed
(docs/discovery.md).

Probes each URL (every model it lists on /v1/models), scrapes the engine's
/metrics on the same host, and shows them live. A URL may be the server root
(http://host:8000), the /v1 base, or a full endpoint path. When stdout is not
a terminal it prints a plain-text summary every refresh (--json: one JSON
object per line and refresh, as 'ttftop snapshot --json' prints once),
each with every objective's state and value and the alert episodes; then
notification failures are also said on stderr (on a terminal: the header's
sources line). Notifications never delivered make the exit status 1.`

// viewFlags are the display flags of the dashboard and the demo.
type viewFlags struct {
	theme   string
	ascii   bool
	fps     int
	refresh time.Duration
	window  time.Duration
	json    bool
	bell    bool
	set     map[string]bool
	// liveStrip: the main screen streams the probes' text (the demo's
	// first screen); not a flag.
	liveStrip bool
}

func (v *viewFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&v.theme, "theme", themes.DefaultName, "colour theme: dark, light, high-contrast, okabe-ito (colour-blind safe), mono")
	fs.BoolVar(&v.ascii, "ascii", false, "draw charts and borders with plain ASCII (fonts without braille or box runes)")
	fs.IntVar(&v.fps, "fps", tui.DefaultFPS, "maximum frames per second written to the terminal")
	durationVar(fs, &v.refresh, "refresh", tui.DefaultRefresh, "how often the view reads the data")
	bindWindow(fs, &v.window)
	fs.BoolVar(&v.json, "json", false, jsonUsage)
	fs.BoolVar(&v.bell, "bell", false, "ring the terminal bell when an alert starts firing")
}

// merge lets the config file set what the flags did not.
func (v *viewFlags) merge(fs *pflag.FlagSet, c *config.Config) {
	v.set = map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { v.set[f.Name] = true })
	if !v.set["theme"] && c.Theme != "" {
		v.theme = c.Theme
	}
	if !v.set["ascii"] {
		v.ascii = v.ascii || c.ASCII
	}
	if !v.set["fps"] && c.FPS > 0 {
		v.fps = c.FPS
	}
	if !v.set["refresh"] && c.Refresh > 0 {
		v.refresh = c.Refresh.D()
	}
	if !v.set["window"] && c.Window > 0 {
		v.window = c.Window.D()
	}
	if !v.set["bell"] {
		v.bell = v.bell || c.Notify.Bell
	}
}

func runDashboard(fs *pflag.FlagSet) runFunc {
	var sf sourceFlags
	var vf viewFlags
	sf.bind(fs)
	vf.bind(fs)
	procs := bindProcs(fs)
	return func(ctx context.Context, urls []string, stdout, stderr io.Writer) error {
		if err := applyProcs(fs, *procs); err != nil {
			return err
		}
		m, c, err := sf.open(urls, stderr)
		if err != nil {
			return err
		}
		vf.merge(fs, c)
		return serve(ctx, m, c, vf, stdout, stderr)
	}
}

// serve runs the monitor and its view until the user quits or ctx ends:
// the TUI on a terminal, periodic summaries otherwise (headless: then
// notification trouble is also said on stderr, which no header shows).
func serve(ctx context.Context, m *monitor.Monitor, c *config.Config, vf viewFlags, stdout, stderr io.Writer) error {
	if err := m.RecordView(vf.window, vf.refresh); err != nil { // a --record'ed replay shows this window
		return err
	}
	m.ViewWindow(vf.window) // PromQL backfills it
	headless := !isTerminal(stdout) || vf.json
	var log io.Writer
	if headless {
		log = stderr
	}
	return runMonitor(ctx, m, c.Notify, log, func(ctx context.Context) error {
		if headless {
			return report.LoopWithDiagnosis(ctx, stdout, m.Store, m.SLO, m.Diagnosis, vf.refresh, vf.window, vf.json)
		}
		racer, err := newDashboardRacer(m.ProbedAs, m.Recording())
		if err != nil {
			return err
		}
		opts := tui.Options{Theme: vf.theme, ASCII: vf.ascii, FPS: vf.fps, Refresh: vf.refresh, Window: vf.window,
			Bell: vf.bell, Thresholds: thresholds(m.SLO), Diagnosis: m.Diagnosis, Recording: m.Recording(), OnWindow: m.ViewWindow,
			LiveStrip: vf.liveStrip, Racer: racer}
		if err := opts.Validate(); err != nil {
			return err
		}
		return tui.Run(ctx, tui.New(m.Store, m.SLO, opts), nil, nil)
	})
}

// notifyDrain is how long notifications queued at exit get to arrive.
const notifyDrain = 5 * time.Second

// runMonitor runs m's sources and notifications while view runs, then
// stops them; log (nil for a TUI) gets notification trouble as it
// happens. The error joins the view's, the monitor's (closing a recording
// can fail) and the notifications': those still queued get notifyDrain to
// arrive, and any never delivered make it an error, so a run that lost
// an alert exits non-zero and says so.
func runMonitor(ctx context.Context, m *monitor.Monitor, n config.Notify, log io.Writer, view func(context.Context) error) error {
	nt, err := m.AddNotifications(n, monitor.NotifyOptions{Log: log})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	err = view(ctx)
	cancel()
	if merr := <-done; err == nil {
		err = merr
	}
	return errors.Join(err, stopNotifications(nt))
}

// stopNotifications drains nt for notifyDrain; the error says what was
// never delivered.
func stopNotifications(nt *monitor.Notifications) error {
	ctx, cancel := context.WithTimeout(context.Background(), notifyDrain)
	defer cancel()
	if err := nt.Shutdown(ctx); err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	return nil
}

// thresholds draws each endpoint's percentile objective on its charts.
func thresholds(e *slo.Engine) tui.Thresholds {
	objs := e.Objectives()
	return tui.ThresholdFunc(func(endpoint string, sig telemetry.Signal) (float64, bool) {
		for _, o := range objs {
			if o.Kind == slo.Percentile && o.Signal == sig && o.Matches(endpoint) {
				return o.Threshold, true
			}
		}
		return 0, false
	})
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}
