// Package tui is ttftop's terminal UI (Bubble Tea v2). It reads
// telemetry through the Data interface and SLO state through Alerts; it
// never imports a concrete source or the simulator.
//
// Data reaches the UI by a periodic tick that takes a snapshot in a
// tea.Cmd (off the update path); the frame is rebuilt only when that data
// or the UI state changed, and the renderer writes only changed cells.
//
// Wiring (cmd/ttftop):
//
//	opts := tui.Options{Theme: theme, ASCII: ascii, FPS: fps, Refresh: refresh, Window: window, Bell: bell}
//	if err := opts.Validate(); err != nil { ... }       // unknown --theme etc.
//	err := tui.Run(ctx, tui.New(store, engine, opts), nil, nil) // nil: the terminal
//
// A replay (cmd_replay.go) also sets Clock to the replay's clock and
// Replay to its player, which adds the pause, seek and speed keys.
//
// Pass a nil Alerts interface (not a typed nil pointer) when no SLOs are
// configured.
package tui

import (
	"fmt"
	"math"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/themes"
)

// The view's defaults, in one place: the flags and a config file read
// them from here.
const (
	// DefaultFPS caps the frames written to a terminal (and the SSH
	// viewers' links).
	DefaultFPS = 10
	// MaxFPS is the most frames a second any view writes.
	MaxFPS         = 60
	DefaultRefresh = time.Second
	// DefaultWindow is the quantile window of the figures shown.
	DefaultWindow = 5 * time.Minute
)

// Data is the telemetry the UI reads; *telemetry.Store satisfies it.
// Every method must be safe for concurrent use: they are called from
// commands, not from Update.
type Data interface {
	Snapshot(now time.Time, window time.Duration) telemetry.Snapshot
	Series(endpoint string, sig telemetry.Signal, now time.Time, span time.Duration, n int) []float64
	Probes(endpoint string) []telemetry.ProbeAt
	Live(endpoint string) (telemetry.LiveText, time.Time)
	WindowBuckets(endpoint string, sig telemetry.Signal, now time.Time, window time.Duration, bounds []float64) []telemetry.Bucket
}

// Alerts is the SLO state the UI shows; the slo engine satisfies it. It
// may be nil (no objectives): badges then read "—".
type Alerts interface {
	Alerts() []slo.Alert
	Badge(endpoint string, now time.Time) slo.Badge
}

// Diagnoses says why each endpoint is unwell (the monitor's
// *diagnosis.Diagnoser, a replay's diagnoser); called from commands, so
// safe for concurrent use.
type Diagnoses interface {
	Latest() map[string]diagnosis.Diagnosis
}

// Thresholds gives the SLO threshold to draw on a signal's charts, in
// base units (seconds, ratios), as in slo.Objective.Threshold. It is
// called from commands, so it must be safe for concurrent use.
type Thresholds interface {
	Threshold(endpoint string, sig telemetry.Signal) (float64, bool)
}

// ThresholdFunc adapts a function to Thresholds.
type ThresholdFunc func(endpoint string, sig telemetry.Signal) (float64, bool)

// Threshold calls f.
func (f ThresholdFunc) Threshold(endpoint string, sig telemetry.Signal) (float64, bool) {
	return f(endpoint, sig)
}

// ReplayControl drives a recording's playback (*record.Player satisfies
// it). Every method must be safe for concurrent use; Seek may read the
// recording, so it is called from a command, the others from Update.
type ReplayControl interface {
	Pause()
	Resume()
	Paused() bool
	// Seek moves playback to t, returning once the state at t is readable.
	Seek(t time.Time) error
	SetSpeed(speed float64)
	Speed() float64
	// Bounds are the first and last times in the recording.
	Bounds() (first, last time.Time)
	// Cut: the recording has no proper end (a killed recorder, damage).
	Cut() bool
}

// DefaultMaxSpeed is what the replay's "max" key sets when
// Options.MaxSpeed is 0: record.Fastest, playback without pacing.
const DefaultMaxSpeed = math.MaxFloat64

// Options configure the UI. The zero value is usable.
type Options struct {
	// Theme is one of themes.Names() (aliases accepted); "" = dark.
	// NO_COLOR (any non-empty value) forces mono.
	Theme string
	// ASCII draws charts and borders with plain ASCII (no braille/box).
	ASCII bool
	// FPS caps how often the renderer writes (default DefaultFPS, at most
	// MaxFPS).
	FPS int
	// Refresh is how often data is read (default 1s); `[`/`]` change it.
	Refresh time.Duration
	// Window is the quantile and chart window (default 5m); `+`/`-`.
	Window time.Duration
	// Clock returns now (default time.Now); tests pass a fixed clock.
	Clock func() time.Time
	// Bell rings the terminal bell when an alert starts firing.
	Bell bool
	// Thresholds for chart lines; nil = taken from the alerts' objectives.
	Thresholds Thresholds
	// Diagnosis, when set, names each unwell endpoint's cause on its
	// alert lines, under the table, in the detail view and on `e`.
	Diagnosis Diagnoses
	// Title is the header's first word (default "ttftop").
	Title string
	// Getenv reads the environment (default os.Getenv): NO_COLOR.
	Getenv func(string) string
	// Replay, when set, turns on the replay controls (space, arrows,
	// </>, 1/2/3) and the REPLAY header; Clock should then be the
	// replay's clock. Pass a nil interface, not a typed nil pointer.
	Replay ReplayControl
	// Viewers, when set, marks a shared read-only session (SSH): the
	// header shows READ-ONLY and how many are watching.
	Viewers func() int
	// Recording is the --record file, shown as a REC badge so nobody
	// wonders whether this session is being kept.
	Recording string
	// OnWindow, when set, is told the window whenever the user changes
	// it, so that sources can load history for it (monitor.ViewWindow).
	// It is called from Update and must not block.
	OnWindow func(time.Duration)
	// LiveStrip shows, under the main table, a row with the text the
	// probes stream right now (the demo: tokens on the first screen).
	LiveStrip bool
	// Racer, when set, turns on the race key (R): the endpoints the
	// table shows race in the race view. Pass a nil interface, not a
	// typed nil pointer.
	Racer Racer
	// MaxSpeed is the speed the replay's "3" key sets (default
	// DefaultMaxSpeed); speeds from min(MaxSpeed, 1e9) up read "max".
	MaxSpeed float64
}

// Validate reports options the caller should reject (unknown theme,
// negative durations).
func (o Options) Validate() error {
	if _, err := themes.Lookup(o.Theme); err != nil {
		return err
	}
	if o.Refresh < 0 || o.Window < 0 || o.FPS < 0 {
		return fmt.Errorf("refresh, window and fps must not be negative")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.FPS <= 0 {
		o.FPS = DefaultFPS
	}
	o.FPS = min(o.FPS, MaxFPS)
	if o.Refresh <= 0 {
		o.Refresh = DefaultRefresh
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Title == "" {
		o.Title = "ttftop"
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.MaxSpeed <= 0 {
		o.MaxSpeed = DefaultMaxSpeed
	}
	return o
}

// Model is the root tea.Model. It wraps a pointer so that caches built in
// View survive Bubble Tea's value copies.
type Model struct{ a *app }

// New builds the UI over data and alerts (alerts may be nil).
func New(data Data, alerts Alerts, opts Options) Model {
	return Model{a: newApp(data, alerts, opts.withDefaults())}
}

// Init starts the first read and the refresh tick.
func (m Model) Init() tea.Cmd { return m.a.init() }

// Update routes a message to the part of the UI it belongs to.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) { return m, m.a.update(msg) }

// View returns the current frame (cached until something changes).
func (m Model) View() tea.View { return m.a.view() }
