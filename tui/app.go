package tui

import (
	"slices"
	"strings"
	"time"

	bhelp "charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
	"github.com/ttftop/ttftop/tui/alerts"
	"github.com/ttftop/ttftop/tui/common"
	"github.com/ttftop/ttftop/tui/detail"
	"github.com/ttftop/ttftop/tui/gpus"
	"github.com/ttftop/ttftop/tui/header"
	"github.com/ttftop/ttftop/tui/help"
	"github.com/ttftop/ttftop/tui/keys"
	"github.com/ttftop/ttftop/tui/problems"
	"github.com/ttftop/ttftop/tui/table"
)

type screen int

// pane is a part of the main screen that takes the keys (tab cycles).
type pane int

const (
	paneTable pane = iota
	paneGPUs
	paneAlerts
)

const (
	screenMain screen = iota
	screenDetail
	screenHelp
	screenProblems
	screenRace // over the dashboard until esc (race.go)
)

// app is the root state (glow's commonModel + state enum); panes are
// child models with their own update methods.
type app struct {
	data   Data
	alerts Alerts
	opts   Options
	keys   keys.Map
	ctx    common.Context

	noColor  bool
	themeErr error

	windows, refreshes []time.Duration
	wi, ri             int

	width, height int
	screen, back  screen
	focus         pane // where the main screen's keys go
	frozen        bool
	serverSide    bool // latency columns show the engine's figures (v)
	mouseOff      bool // mouse capture off (m), so text can be selected

	table    table.Model
	alertP   alerts.Model
	detail   detail.Model
	help     help.Model
	problems problems.Model
	footer   bhelp.Model
	gpuP     gpus.Model
	// gpusHidden: u hid the GPU panel; layoutGPUH is its height now.
	gpusHidden bool
	layoutGPUH int
	strip      liveStrip  // the main screen's live tokens row
	race       *raceState // the race on screen (R), nil when none
	raceID     int
	raceBack   screen // the screen the race returns to

	// Refresh bookkeeping: one tick chain and one live chain, each with
	// an id so a superseded chain dies (bubbles#661: two chains double
	// the rate); fetch results carry a sequence so late ones are dropped.
	tickID, liveID  int
	liveOn          bool
	liveLeft        int // live reads before the next refresh is due
	seq, applied    uint64
	minSeq          uint64
	inflight        bool
	sparkN          int // chart points per row the last refresh asked for
	fp              uint64
	snap            telemetry.Snapshot
	alertList       []slo.Alert
	firing          map[string]bool
	haveData        bool
	note            string
	noteUntil       time.Time
	layoutAlertsH   int
	layoutTableTop  int
	layoutAlertsTop int

	// Replay: a seek runs in a command; keys pressed meanwhile move
	// seekTo, which is sought next (seekAgain) instead of piling up.
	seeking, seekAgain bool
	seekTo             time.Time
	quietBell          bool // after a seek: alerts already firing there do not ring

	hdr        header.Cache
	frame      string
	dirty      bool
	footerKey  footerKey
	footerLine string
	fold       *strings.Replacer // --ascii safety net, nil otherwise
}

func newApp(data Data, al Alerts, o Options) *app {
	a := &app{data: data, alerts: al, opts: o, dirty: true}
	a.noColor = themes.NoColor(o.Getenv)
	th, err := themes.Resolve(o.Theme, o.Getenv)
	a.themeErr = err
	a.ctx.Styles = themes.NewStyles(th)
	a.ctx.Glyphs = themes.NewGlyphs(o.ASCII)
	a.keys = keys.New(o.ASCII)
	if o.Replay != nil {
		a.keys = a.keys.WithReplay()
	}
	if o.Racer != nil {
		a.keys = a.keys.WithRace()
	}
	if o.ASCII {
		a.fold = asciiFold()
	}
	a.windows = withChoice([]time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}, o.Window)
	a.refreshes = withChoice([]time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second,
		2 * time.Second, 5 * time.Second, 10 * time.Second}, o.Refresh)
	a.wi = slices.Index(a.windows, o.Window)
	a.ri = slices.Index(a.refreshes, o.Refresh)
	a.ctx.Window, a.ctx.Refresh = o.Window, o.Refresh
	a.ctx.Now = o.Clock()
	a.table = table.New(&a.ctx)
	a.alertP = alerts.New(&a.ctx)
	a.detail = detail.New(&a.ctx)
	a.help = help.New(&a.ctx, a.keys)
	a.problems = problems.New(&a.ctx)
	a.gpuP = gpus.New(&a.ctx)
	a.footer = help.Bubbles(&a.ctx)
	a.table.Filter().SetStyles(a.ctx.Styles.Lip.Desc)
	a.firing = map[string]bool{}
	if err != nil {
		a.flash("unknown theme: using dark")
	}
	return a
}

// withChoice adds v to the sorted choices if it is not one of them.
func withChoice(choices []time.Duration, v time.Duration) []time.Duration {
	if !slices.Contains(choices, v) {
		choices = append(choices, v)
		slices.Sort(choices)
	}
	return choices
}

func (a *app) init() tea.Cmd {
	return tea.Batch(a.fetch(), a.startTick())
}

// flash shows a short note in the header for a few seconds.
func (a *app) flash(s string) { a.flashFor(s, 3*time.Second) }

// flashFor shows a note for d of wall time (not Options.Clock: a replay's
// clock may stand still or run 10× faster).
func (a *app) flashFor(s string, d time.Duration) {
	a.note, a.noteUntil = s, time.Now().Add(d)
	a.dirty = true
}

func (a *app) setTheme(t themes.Theme) {
	a.ctx.Styles = themes.NewStyles(t)
	a.footer = help.Bubbles(&a.ctx)
	a.table.Filter().SetStyles(a.ctx.Styles.Lip.Desc)
	a.detail.Invalidate()
	a.table.Invalidate()
	a.help.Invalidate()
	a.dirty = true
}
