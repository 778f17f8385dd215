package monitor

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/tokentop/tokentop/record"
	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
)

// Judging says how a replay judges a recording.
type Judging struct {
	// Objectives, complete; judged as given (SLO.Scale scales them).
	Objectives []slo.Objective
	SLO        slo.Options
	// Store configures the replay's store (zero: the defaults).
	Store telemetry.StoreConfig
	// EvalEvery is the evaluation step of `--json --at` when judging again
	// (default 1 s, the monitor's).
	EvalEvery time.Duration
	// AsRecorded takes every alert's state and the alert history from the
	// recording's transitions (what live showed); the engine judging the
	// observations again gives only the figures (value, burn rates, data
	// state). Otherwise the engine's own judgement is shown.
	AsRecorded bool
}

// RecordedJudging is the judging a recording's settings describe: its
// objectives as live judged them (already scaled, so not scaled again),
// the engine's options and the store's configuration, with the alerts
// taken from the recorded transitions.
func RecordedJudging(s record.Settings) Judging {
	j := Judging{AsRecorded: true}
	if s.SLO != nil {
		j.Objectives = s.SLO.Objectives
		j.SLO = s.SLO.Options
		j.SLO.Scale, j.SLO.MinWindow = 0, 0 // the objectives are scaled already
		j.EvalEvery = s.SLO.EvalEvery
	}
	if s.Store != nil {
		j.Store = *s.Store
	}
	return j
}

func (j Judging) evalEvery() time.Duration {
	if j.EvalEvery > 0 {
		return j.EvalEvery
	}
	return time.Second
}

// Replay plays a recording into a fresh store and SLO engine, and serves
// them to the views as the live monitor does; a seek swaps in a new pair,
// so every read goes through the player's current sink.
type Replay struct {
	player *record.Player
}

// NewReplay opens a recording for playback at speed (record.Fastest for no
// pacing), judged as j says.
func NewReplay(path string, speed float64, j Judging) (*Replay, error) {
	newSink := func() telemetry.Sink { return newReplaySink(j) }
	// After a seek, the history filled in behind is what the store and
	// the objectives can use, no more.
	history := replayLookback(newReplaySink(j), 0)
	p, err := record.NewPlayer(path, record.PlayerOptions{NewSink: newSink, Speed: speed, History: history})
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
				s.evaluateAt(r.player.Clock())
			}
		}
	}
}

// Close releases the recording.
func (r *Replay) Close() error { return r.player.Close() }

// current is the sink the player feeds now; one fresh from a seek is
// judged at once rather than at the next tick.
func (r *Replay) current() *replaySink {
	s, _ := r.player.Sink().(*replaySink)
	if s != nil && !s.evaluated() {
		s.evaluateAt(r.player.Clock())
	}
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

// Alerts lists the alerts live listed at the replay's time (as recorded),
// or the replay's own judgement.
func (r *Replay) Alerts() []slo.Alert {
	if s := r.current(); s != nil {
		return s.alerts(r.player.Clock())
	}
	return nil
}

// Badge is the endpoint's SLO badge at now, from the same alerts.
func (r *Replay) Badge(ep string, now time.Time) slo.Badge {
	if s := r.current(); s != nil {
		return s.badge(ep, now)
	}
	return slo.BadgeNone
}

// ReplayState is what a replay shows at one instant (`replay --json --at`).
type ReplayState struct {
	Snapshot telemetry.Snapshot
	// Alerts is every objective × endpoint with its state and figures.
	Alerts []slo.Alert
	// History is the alerts that fired: firing now, then resolved, newest
	// first (slo.Engine.History).
	History []slo.Alert
}

// ReplayAt returns the state at t, reading only the recording from
// t − lookback (lookback: the window, the store's longest window and the
// objectives' windows and periods, at most a day; each segment's preamble
// restores what is older, the recorded alert state included). A damage
// error that stopped the read before t comes with the state before it.
func ReplayAt(path string, t time.Time, window time.Duration, j Judging) (ReplayState, error) {
	s := newReplaySink(j)
	if s.step > 0 {
		// Judging again: evaluate the last maxCatchUp before t, step by
		// step (an hour of steps costs seconds for 50 endpoints).
		s.next = t.Add(-maxCatchUp).Truncate(s.step)
	}
	err := record.Feed(path, t.Add(-replayLookback(s, window)), t, s)
	s.evaluateUntil(t)
	s.evaluateAt(t)
	st := ReplayState{Snapshot: s.store.Snapshot(t, window), Alerts: s.rows(), History: s.history()}
	return st, err
}

func replayLookback(s *replaySink, window time.Duration) time.Duration {
	const most = 24 * time.Hour
	d := max(window, s.store.Config().MaxWindow)
	for _, o := range s.engine.Objectives() {
		d = max(d, min(max(o.Window, o.Period), most))
	}
	return d
}

// replaySink is what the player feeds: the store the views read, the SLO
// engine judging the same observations, and (judging as recorded) the
// alert book the recorded transitions keep.
type replaySink struct {
	telemetry.Tee
	store       *telemetry.Store
	engine      *slo.Engine
	book        *alertBook // nil: the engine's judgement is shown
	resolvedFor time.Duration

	evalMu   sync.Mutex
	lastEval time.Time
	step     time.Duration // > 0: evaluate every step of recording time
	next     time.Time     // the next step
}

// maxCatchUp bounds the evaluations a jump in recording time replays (a
// segment preamble's old lines, then the segment; a silent stretch):
// beyond it the engine's state rests only on the data in its windows.
const maxCatchUp = 10 * time.Minute

func newReplaySink(j Judging) *replaySink {
	st := telemetry.NewStore(j.Store)
	e := slo.New(j.Objectives, st, j.SLO)
	s := &replaySink{Tee: telemetry.Tee{st, e}, store: st, engine: e, resolvedFor: j.SLO.ResolvedFor}
	if s.resolvedFor <= 0 {
		s.resolvedFor = 15 * time.Minute // slo.Options.ResolvedFor's default
	}
	if j.AsRecorded {
		s.book = newAlertBook(j.SLO.History)
	} else {
		// Judging again: the engine's states depend on being evaluated
		// as live was, every step, also when a seek feeds minutes at once.
		s.step = j.evalEvery()
	}
	return s
}

// Observe feeds o, evaluating first the steps it passes.
func (s *replaySink) Observe(o telemetry.Observation) {
	if s.step > 0 {
		s.evaluateUntil(o.At)
	}
	s.Tee.Observe(o)
}

// evaluateUntil evaluates every step up to t (judging again only).
func (s *replaySink) evaluateUntil(t time.Time) {
	if s.step <= 0 {
		return
	}
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	if s.next.IsZero() || t.Sub(s.next) > maxCatchUp {
		s.next = t.Truncate(s.step)
	}
	for ; !s.next.After(t); s.next = s.next.Add(s.step) {
		if s.next.After(s.lastEval) {
			s.engine.Evaluate(s.next)
			s.lastEval = s.next
		}
	}
}

// evaluateAt evaluates at t unless the engine was evaluated at or after
// it: evaluation times never go back.
func (s *replaySink) evaluateAt(t time.Time) {
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	if t.After(s.lastEval) {
		s.engine.Evaluate(t)
		s.lastEval = t
	}
}

// evaluated reports whether the engine has judged anything yet.
func (s *replaySink) evaluated() bool {
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	return !s.lastEval.IsZero()
}

// ObserveAlert takes a recorded transition into the book.
func (s *replaySink) ObserveAlert(_ time.Time, raw json.RawMessage) {
	if s.book != nil {
		s.book.apply(raw)
	}
}

// rows is every objective × endpoint (slo.Engine.Current), with the
// recorded state when judging as recorded.
func (s *replaySink) rows() []slo.Alert {
	if s.book == nil {
		return s.engine.Current()
	}
	return s.book.overlay(s.engine.Current())
}

func (s *replaySink) alerts(now time.Time) []slo.Alert {
	if s.book == nil {
		return s.engine.Alerts()
	}
	var out []slo.Alert
	for _, a := range s.rows() {
		if slo.Open(a.State) {
			out = append(out, a)
		}
	}
	out = append(out, s.book.resolvedSince(now.Add(-s.resolvedFor))...)
	sortAlerts(out)
	return out
}

func (s *replaySink) history() []slo.Alert {
	if s.book == nil {
		return s.engine.History()
	}
	return s.book.history(s.rows())
}

func (s *replaySink) badge(ep string, now time.Time) slo.Badge {
	if s.book == nil {
		return s.engine.Badge(ep, now)
	}
	var rows []slo.Alert
	for _, a := range s.rows() {
		if a.Endpoint == ep {
			rows = append(rows, a)
		}
	}
	if len(rows) == 0 {
		return s.engine.Badge(ep, now) // none yet: whether any applies
	}
	return badgeOf(rows)
}
