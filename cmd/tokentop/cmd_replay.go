package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tokentop/tokentop/monitor"
	"github.com/tokentop/tokentop/record"
	"github.com/tokentop/tokentop/report"
	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
	"github.com/tokentop/tokentop/tui"
)

func init() {
	register(command{name: "replay", summary: "play a --record'ed session back into the dashboard, or print it at a time", run: runReplay})
}

const replayUsage = `tokentop replay FILE [--speed 1|10|max] [flags]
       tokentop replay FILE --json [--at TIME] [--window 5m]

Plays a recording (from --record) into the dashboard as it looked live:
the clock shows the recorded times and the SLOs are judged again on the
same observations. In the dashboard, space pauses and resumes, left and
right seek 30 s (shift+arrows or < and >: 5 min), and 1, 2, 3 play at
1x, 10x and max speed. --json prints the snapshot at --at (RFC 3339, or
an offset from the start such as 10m; default the end). A damaged
recording plays up to the damage and says where it stopped.`

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", replayUsage, stderr)
	var vf viewFlags
	vf.bind(fs)
	speed := fs.String("speed", "1", "playback speed: 1, 10 or max")
	at := fs.String("at", "", "with --json: the time to read (RFC 3339 or offset from the start)")
	sloFlags := slo.BindFlags(fs)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fs.Usage()
		return errors.New("replay: give exactly one recording file")
	}
	path := rest[0]
	if vf.json {
		t, err := replayTime(path, *at)
		if err != nil {
			return err
		}
		snap, err := record.SnapshotAt(path, t, vf.window)
		var damage *record.DamageError
		if err != nil && !errors.As(err, &damage) {
			return err
		}
		if jerr := report.JSON(stdout, snap); jerr != nil {
			return jerr
		}
		if damage != nil {
			fmt.Fprintf(stderr, "tokentop replay: %v\n", damage)
		}
		return nil
	}
	sp, err := parseSpeed(*speed)
	if err != nil {
		return err
	}
	objs, err := sloFlags.Objectives()
	if err != nil {
		return err
	}
	r, err := monitor.NewReplay(path, sp, objs, sloFlags.Options())
	if err != nil {
		return err
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	if isTerminal(stdout) {
		opts := tui.Options{Theme: vf.theme, ASCII: vf.ascii, FPS: vf.fps, Refresh: vf.refresh, Window: vf.window,
			Clock: r.Clock, Replay: r.Player(), MaxSpeed: record.Fastest} // the header says REPLAY
		if err = opts.Validate(); err == nil {
			err = tui.Run(ctx, tui.New(r, r, opts), nil, nil)
		}
	} else {
		err = report.Loop(ctx, stdout, clockedReader{r}, vf.refresh, vf.window, false)
	}
	cancel()
	var damage *record.DamageError
	if rerr := <-done; errors.As(rerr, &damage) {
		fmt.Fprintf(stderr, "tokentop replay: %v\n", damage)
	} else if err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	return err
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

// replayTime reads --at: RFC 3339, or an offset from the recording's start.
func replayTime(path, at string) (time.Time, error) {
	if at == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, at); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(at)
	if err != nil {
		return time.Time{}, fmt.Errorf("--at %q: want RFC 3339 or an offset such as 10m", at)
	}
	first, _, err := record.Bounds(path)
	if err != nil {
		return time.Time{}, err
	}
	return first.Add(d), nil
}
