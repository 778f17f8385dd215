package monitor

import (
	"context"
	"math"
	"time"

	"github.com/tokentop/tokentop/record"
	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
)

// Replay plays a recording into a fresh store and SLO engine, and serves
// them to the views as the live monitor does; a seek swaps in a new pair,
// so every read goes through the player's current sink.
type Replay struct {
	player *record.Player
}

// replaySink is what the player feeds: the store the views read and the
// SLO engine judging the same observations.
type replaySink struct {
	telemetry.Tee
	store  *telemetry.Store
	engine *slo.Engine
}

// NewReplay opens a recording for playback at speed (record.Fastest for no
// pacing), judging it against objs.
func NewReplay(path string, speed float64, objs []slo.Objective, opts slo.Options) (*Replay, error) {
	newSink := func() telemetry.Sink {
		st := telemetry.NewStore(telemetry.StoreConfig{})
		e := slo.New(objs, st, opts)
		return &replaySink{Tee: telemetry.Tee{st, e}, store: st, engine: e}
	}
	p, err := record.NewPlayer(path, record.PlayerOptions{NewSink: newSink, Speed: speed})
	if err != nil {
		return nil, err
	}
	return &Replay{player: p}, nil
}

// Player gives access to pause, seek and speed.
func (r *Replay) Player() *record.Player { return r.player }

// Clock is the replay's current time: views show times as they were.
func (r *Replay) Clock() time.Time { return r.player.Clock() }

// Run plays until ctx is done (holding the last state at the end),
// evaluating the SLOs on the replay's clock.
func (r *Replay) Run(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- r.player.Run(ctx) }()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if s := r.current(); s != nil {
				s.engine.Evaluate(r.player.Clock())
			}
		}
	}
}

// Close releases the recording.
func (r *Replay) Close() error { return r.player.Close() }

func (r *Replay) current() *replaySink {
	s, _ := r.player.Sink().(*replaySink)
	return s
}

// The tui.Data and tui.Alerts methods, read from the current sink.

func (r *Replay) Snapshot(now time.Time, window time.Duration) telemetry.Snapshot {
	if s := r.current(); s != nil {
		return s.store.Snapshot(now, window)
	}
	return telemetry.Snapshot{At: now, Window: window}
}

func (r *Replay) Series(ep string, sig telemetry.Signal, now time.Time, span time.Duration, n int) []float64 {
	if s := r.current(); s != nil {
		return s.store.Series(ep, sig, now, span, n)
	}
	gaps := make([]float64, n) // nothing played yet: all gaps, never zeros
	for i := range gaps {
		gaps[i] = math.NaN()
	}
	return gaps
}

func (r *Replay) Probes(ep string) []telemetry.ProbeAt {
	if s := r.current(); s != nil {
		return s.store.Probes(ep)
	}
	return nil
}

func (r *Replay) Live(ep string) (telemetry.LiveText, time.Time) {
	if s := r.current(); s != nil {
		return s.store.Live(ep)
	}
	return telemetry.LiveText{}, time.Time{}
}

func (r *Replay) WindowBuckets(ep string, sig telemetry.Signal, now time.Time, window time.Duration, bounds []float64) []telemetry.Bucket {
	if s := r.current(); s != nil {
		return s.store.WindowBuckets(ep, sig, now, window, bounds)
	}
	return nil
}

func (r *Replay) Alerts() []slo.Alert {
	if s := r.current(); s != nil {
		return s.engine.Alerts()
	}
	return nil
}

func (r *Replay) Badge(ep string, now time.Time) slo.Badge {
	if s := r.current(); s != nil {
		return s.engine.Badge(ep, now)
	}
	return slo.BadgeNone
}
