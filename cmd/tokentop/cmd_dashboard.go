package main

import (
	"context"
	"flag"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/tokentop/tokentop/config"
	"github.com/tokentop/tokentop/monitor"
	"github.com/tokentop/tokentop/report"
	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
	"github.com/tokentop/tokentop/tui"
)

func init() {
	register(command{name: "dashboard", summary: "the live dashboard ('tokentop URL...' is short for 'tokentop dashboard URL...')", run: runDashboard})
}

const dashboardUsage = `tokentop [dashboard] URL [URL...] [flags]
       tokentop dashboard --config FILE | --prometheus URL | --scrape URL [flags]

Probes each URL (every model it lists on /v1/models), scrapes the engine's
/metrics on the same host, and shows them live. A URL may be the server root
(http://host:8000), the /v1 base, or a full endpoint path. When stdout is not
a terminal it prints a plain-text summary every refresh (--json: JSON lines).`

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
}

func (v *viewFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&v.theme, "theme", config.DefaultTheme, "colour theme: dark, light, high-contrast, okabe-ito (colour-blind safe), mono")
	fs.BoolVar(&v.ascii, "ascii", false, "draw charts and borders with plain ASCII (fonts without braille or box runes)")
	fs.IntVar(&v.fps, "fps", config.DefaultFPS, "maximum frames per second written to the terminal")
	fs.DurationVar(&v.refresh, "refresh", config.DefaultRefresh, "how often the view reads the data")
	fs.DurationVar(&v.window, "window", config.DefaultWindow, "quantile window: 1m, 5m, 15m, 1h")
	fs.BoolVar(&v.json, "json", false, "headless: print one JSON snapshot per refresh instead of the dashboard")
	fs.BoolVar(&v.bell, "bell", false, "ring the terminal bell when an alert starts firing")
}

// merge lets the config file set what the flags did not.
func (v *viewFlags) merge(fs *flag.FlagSet, c *config.Config) {
	v.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { v.set[f.Name] = true })
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

func runDashboard(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dashboard", dashboardUsage, stderr)
	var sf sourceFlags
	var vf viewFlags
	sf.bind(fs)
	vf.bind(fs)
	procs := bindProcs(fs)
	urls, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := applyProcs(fs, *procs); err != nil {
		return err
	}
	m, c, err := sf.open(urls, stderr)
	if err != nil {
		return err
	}
	vf.merge(fs, c)
	return serve(ctx, m, c, vf, stdout)
}

// serve runs the monitor and its view until the user quits or ctx ends:
// the TUI on a terminal, periodic summaries otherwise.
func serve(ctx context.Context, m *monitor.Monitor, c *config.Config, vf viewFlags, stdout io.Writer) error {
	if err := m.RecordView(vf.window, vf.refresh); err != nil { // a --record'ed replay shows this window
		return err
	}
	return runMonitor(ctx, m, c, func(ctx context.Context) error {
		if !isTerminal(stdout) || vf.json {
			return report.Loop(ctx, stdout, m.Store, vf.refresh, vf.window, vf.json)
		}
		opts := tui.Options{Theme: vf.theme, ASCII: vf.ascii, FPS: vf.fps, Refresh: vf.refresh, Window: vf.window,
			Bell: vf.bell, Thresholds: thresholds(m.SLO)}
		if err := opts.Validate(); err != nil {
			return err
		}
		return tui.Run(ctx, tui.New(m.Store, m.SLO, opts), nil, nil)
	})
}

// runMonitor runs m's sources and notifications while view runs, then
// stops them. The error is the view's, else the monitor's (closing a
// recording can fail), else the notifier's, which gets 5 s to deliver
// what is pending.
func runMonitor(ctx context.Context, m *monitor.Monitor, c *config.Config, view func(context.Context) error) error {
	stopNotify, err := m.AddNotifications(c.Notify)
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
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if nerr := stopNotify(sctx); err == nil {
		err = nerr
	}
	return err
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
