package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/internal/monitor"
	"github.com/ttftop/ttftop/internal/report"
	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui"
)

func replayCommand() command {
	return command{name: "replay", summary: "play a --record'ed session back into the dashboard, or print it at a time", usage: replayUsage, bind: runReplay}
}

const replayUsage = `ttftop replay FILE [--speed 1|10|max] [flags]
       ttftop replay FILE --json [--at TIME] [--window 5m]

Plays a recording (from --record) into the dashboard as it looked live:
the clock shows the recorded times, the objectives, window and refresh are
the recorded ones, and every alert's state and the alert history are what
live showed (the recorded transitions), at any seek point. --slo-*,
--window and --refresh flags given explicitly override the recording; with
--slo-* flags the SLOs are judged again and the alerts are the replay's.
In the dashboard, space pauses and resumes, left and right seek 30 s
(shift+arrows or < and >: 5 min), and 1, 2, 3 play at 1x, 10x and max
speed. --json prints the snapshot and the alerts at --at (RFC 3339, or an
offset from the start such as 10m; default the end); a time outside the
recording exits 2. A damaged or unfinished recording (the recorder was
killed or lost its terminal, the disk filled) plays up to its last
complete line and says on stderr where it stopped.

A race's recording (race --record) plays in the race view at its true
pace: each chunk drawn at the instant it arrived live, never sooner.`

func runReplay(fs *pflag.FlagSet) runFunc {
	var vf viewFlags
	vf.bind(fs)
	speed := fs.String("speed", "1", "playback speed: 1, 10 or max")
	at := fs.String("at", "", "with --json: the time to read (RFC 3339 or offset from the start)")
	sloFlags := bindSLOFlags(fs)
	return func(ctx context.Context, rest []string, stdout, stderr io.Writer) error {
		if len(rest) != 1 {
			return usagef("give exactly one recording file (got %d arguments)", len(rest))
		}
		path := rest[0]
		sp, err := parseSpeed(*speed)
		if err != nil {
			return usageError{msg: err.Error()}
		}
		if h, events, isRace, err := readRaceRecording(path); isRace {
			if sp != 1 {
				fmt.Fprintf(stderr, "ttftop replay: a race plays at its true pace (--speed ignored)\n")
			}
			return replayRace(ctx, h, events, err, stdout)
		}
		settings, hasSettings, err := record.ReadSettings(path)
		if err != nil {
			return err
		}
		given := map[string]bool{}
		fs.Visit(func(f *pflag.Flag) { given[f.Name] = true })
		if hasSettings && settings.View != nil {
			if v := settings.View.Window; v > 0 && !given["window"] {
				vf.window = v
			}
			if v := settings.View.Refresh; v > 0 && !given["refresh"] {
				vf.refresh = v
			}
		}
		judging, note, err := replayJudging(settings, hasSettings, sloFlags)
		if err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintf(stderr, "ttftop replay: %s\n", note)
		}
		first, last, damage := record.Bounds(path)
		if first.IsZero() {
			if damage != nil {
				return damage
			}
			return fmt.Errorf("replay: %s holds no observation", path)
		}
		if damage != nil && !isDamage(damage) {
			return damage
		}
		if damage == nil {
			noteUnclosable(path, last, stderr)
		}
		if vf.json {
			return replayJSON(path, *at, first, last, damage, vf.window, judging, stdout, stderr)
		}
		dashboard := isTerminal(stdout)
		if damage != nil && !dashboard {
			// Said before the figures stream, where it stays in view; a
			// dashboard's screen would hide it, so that is told after.
			fmt.Fprintf(stderr, "ttftop replay: %v\n", damage)
		}
		r, err := monitor.NewReplay(path, sp, judging)
		if err != nil {
			return err
		}
		defer r.Close()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		if dashboard {
			opts := tui.Options{Theme: vf.theme, ASCII: vf.ascii, FPS: vf.fps, Refresh: vf.refresh, Window: vf.window,
				Clock: r.Clock, Replay: r.Player(), MaxSpeed: record.Fastest, // the header says REPLAY
				Thresholds: objectiveThresholds(judging.Objectives), Diagnosis: r}
			if err = opts.Validate(); err == nil {
				err = tui.Run(ctx, tui.New(r, r, opts), nil, nil)
			}
		} else {
			err = report.Loop(ctx, stdout, clockedReader{r}, vf.refresh, vf.window, false)
		}
		cancel()
		rerr := <-done
		for _, d := range damageToSayAfter(damage, rerr, dashboard) {
			fmt.Fprintf(stderr, "ttftop replay: %v\n", d)
		}
		if !isDamage(rerr) && err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
			err = rerr
		}
		return err
	}
}

// damageToSayAfter is what a replay says of damage once it ends, each
// notice once: the recording's damage after a dashboard (said before the
// figures otherwise), and the playback's own damage only where it is news;
// reaching the damaged line it names the damage already said.
func damageToSayAfter(damage, playback error, dashboard bool) []error {
	var say []error
	if damage != nil && dashboard {
		say = append(say, damage)
	}
	if isDamage(playback) && (damage == nil || !sameDamage(damage, playback)) {
		say = append(say, playback)
	}
	return say
}

// sameDamage: two reads of one recording stopped at the same line.
func sameDamage(a, b error) bool {
	var da, db *record.DamageError
	return errors.As(a, &da) && errors.As(b, &db) && da.Line == db.Line
}

// replayJudging decides how the replay judges the recording, and what to
// tell the user about it: as recorded when the recording says how live
// judged it and no --slo-* flag overrides that; otherwise again, with the
// flags over the recorded objectives (or the defaults).
func replayJudging(s record.Settings, has bool, f *sloFlags) (monitor.Judging, string, error) {
	if has && s.SLO != nil {
		j := monitor.RecordedJudging(s)
		if !f.Changed() {
			return j, "", nil
		}
		objs, err := f.Apply(j.Objectives)
		if err != nil {
			return monitor.Judging{}, "", err
		}
		j.Objectives, j.SLO.Scale, j.AsRecorded = objs, f.Options().Scale, false
		return j, "judging the SLOs again with the --slo-* flags over the recorded objectives: the alerts are this replay's, not what live showed", nil
	}
	objs, err := f.Objectives()
	if err != nil {
		return monitor.Judging{}, "", err
	}
	j := monitor.Judging{Objectives: objs, SLO: f.Options()}
	if s.Store != nil {
		j.Store = *s.Store
	}
	what := "the default objectives"
	if f.Changed() {
		what = "the objectives of the --slo-* flags"
	}
	return j, "the recording has no settings (made by a ttftop before recording format 2): judging the SLOs again with " +
		what + " and the window of --window; the alerts are this replay's, not what live showed", nil
}

// replayDoc is `replay --json`: the snapshot, then every objective ×
// endpoint with its state at that time, and the alert history.
type replayDoc struct {
	telemetry.Snapshot
	// Judged is "as recorded" (the alert states are the recorded
	// transitions) or "again" (this replay's judgement).
	Judged       string          `json:"judged"`
	Objectives   []slo.Objective `json:"objectives"`
	Alerts       []slo.Alert     `json:"alerts"`
	AlertHistory []slo.Alert     `json:"alert_history"`
	// Diagnosis is every endpoint's, written into its entry as live's
	// snapshots do.
	Diagnosis map[string]diagnosis.Diagnosis `json:"-"`
}

// MarshalJSON writes the document with every number named for its unit,
// as all of ttftop's JSON (docs/json.md; slo.AlertJSON,
// slo.ObjectiveJSON).
func (d replayDoc) MarshalJSON() ([]byte, error) {
	snap, err := json.Marshal(d.Snapshot)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(snap, &m); err != nil {
		return nil, err
	}
	m["schema"] = telemetry.JSONSchema
	m["window_ms"] = float64(d.Window) / float64(time.Millisecond)
	m["endpoints"] = report.WithDiagnosis(d.Endpoints, d.Diagnosis)
	m["judged"] = d.Judged
	objs := make([]map[string]any, 0, len(d.Objectives))
	for _, o := range d.Objectives {
		j, err := slo.ObjectiveJSON(o)
		if err != nil {
			return nil, err
		}
		objs = append(objs, j)
	}
	m["objectives"] = objs
	for key, list := range map[string][]slo.Alert{"alerts": d.Alerts, "alert_history": d.AlertHistory} {
		alerts := make([]map[string]any, 0, len(list))
		for _, a := range list {
			j, err := slo.AlertJSON(a)
			if err != nil {
				return nil, err
			}
			alerts = append(alerts, j)
		}
		m[key] = alerts
	}
	return json.Marshal(m)
}

func replayJSON(path, at string, first, last time.Time, damage error, window time.Duration, j monitor.Judging, stdout, stderr io.Writer) error {
	t := last
	if at != "" {
		var err error
		if t, err = parseReplayTime(at, first); err != nil {
			return usageError{msg: err.Error()}
		}
	}
	if t.Before(first) || t.After(last) {
		end := "ends"
		if damage != nil {
			end = "is readable up to"
			fmt.Fprintf(stderr, "ttftop replay: %v\n", damage)
		}
		return usagef("--at %s: %s is outside the recording, which starts at %s and %s %s (%s long)",
			at, t.UTC().Format(time.RFC3339Nano), first.UTC().Format(time.RFC3339Nano), end, last.UTC().Format(time.RFC3339Nano),
			spanText(last.Sub(first)))
	}
	st, err := monitor.ReplayAt(path, t, window, j)
	var d *record.DamageError
	if errors.As(err, &d) && d.LastAt.Before(t) {
		// Reading stopped before t: a damaged stretch, not the end.
		return exitError{code: 2, err: fmt.Errorf("--at %s: the recording cannot be read up to that time: %w", at, d)}
	}
	if err != nil && d == nil {
		return err
	}
	doc := replayDoc{Snapshot: st.Snapshot, Judged: "again", Objectives: j.Objectives, Alerts: st.Alerts, AlertHistory: st.History, Diagnosis: st.Diagnosis}
	if j.AsRecorded {
		doc.Judged = "as recorded"
	}
	for _, s := range []*[]slo.Alert{&doc.Alerts, &doc.AlertHistory} {
		if *s == nil {
			*s = []slo.Alert{} // none, not unknown
		}
	}
	if doc.Objectives == nil {
		doc.Objectives = []slo.Objective{}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if damage != nil {
		fmt.Fprintf(stderr, "ttftop replay: %v\n", damage)
	}
	return nil
}

// noteUnclosable says, for a recording older than the closing line, that
// whether it was cut cannot be told: replay --help promises to say where
// an unfinished recording stops.
func noteUnclosable(path string, last time.Time, stderr io.Writer) {
	if v, err := record.Version(path); err == nil && v > 0 && v < 3 {
		fmt.Fprintf(stderr, "ttftop replay: recording format %d has no closing record, so a recording cut between two lines "+
			"(the recorder killed) cannot be told from a finished one; replayed up to %s\n", v, last.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	}
}

// spanText prints a recording's length as durations print everywhere
// ("6m3s", not Go's "6m3.359s"): to the second, or to the ms under one.
func spanText(d time.Duration) string {
	if d < time.Second {
		return slo.FormatDuration(d.Round(time.Millisecond))
	}
	return slo.FormatDuration(d.Round(time.Second))
}

func isDamage(err error) bool {
	var d *record.DamageError
	return errors.As(err, &d)
}

// objectiveThresholds draws each endpoint's percentile objective on its
// charts, as the live dashboard does.
func objectiveThresholds(objs []slo.Objective) tui.Thresholds {
	return tui.ThresholdFunc(func(endpoint string, sig telemetry.Signal) (float64, bool) {
		for _, o := range objs {
			if o.Kind == slo.Percentile && o.Signal == sig && o.Matches(endpoint) {
				return o.Threshold, true
			}
		}
		return 0, false
	})
}

// The player is the dashboard's replay control (pause, seek, speed).
var _ tui.ReplayControl = (*record.Player)(nil)

// clockedReader reads snapshots at the replay's time, not the wall clock.
type clockedReader struct{ r *monitor.Replay }

func (c clockedReader) Snapshot(_ time.Time, window time.Duration) telemetry.Snapshot {
	return c.r.Snapshot(c.r.Clock(), window)
}

func parseSpeed(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "max", "fastest":
		return record.Fastest, nil
	case "1", "1x":
		return 1, nil
	case "10", "10x":
		return 10, nil
	}
	return 0, fmt.Errorf("--speed %q: want 1, 10 or max", s)
}

// parseReplayTime reads --at: RFC 3339, or an offset from the recording's
// first observation.
func parseReplayTime(at string, first time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(at)
	if err != nil {
		return time.Time{}, fmt.Errorf("--at %q: want RFC 3339 or an offset such as 10m", at)
	}
	return first.Add(d), nil
}
