package monitor

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
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
	// Diagnosis tunes the diagnosis made at every evaluation step, as
	// live made it (zero: the defaults, live's).
	Diagnosis diagnosis.Config
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

// Latest is the diagnosis of every endpoint at the replay's time, made
// from the recorded observations and alert states as live made it
// (tui.Diagnoses).
func (r *Replay) Latest() map[string]diagnosis.Diagnosis {
	if s := r.current(); s != nil {
		return s.diag.Latest()
	}
	return nil
}

// ReplayState is what a replay shows at one instant (`replay --json --at`).
type ReplayState struct {
	Snapshot telemetry.Snapshot
	// Diagnosis is every endpoint's diagnosis at the instant, by name.
	Diagnosis map[string]diagnosis.Diagnosis
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
	// Evaluate (judging again) and diagnose the last maxCatchUp before t,
	// step by step (an hour of steps costs seconds for 50 endpoints): the
	// diagnosis's baselines learn from that history as live's did.
	s.next = t.Add(-maxCatchUp).Truncate(s.step)
	err := record.Feed(path, t.Add(-replayLookback(s, window)), t, s)
	s.evaluateUntil(t)
	s.evaluateAt(t)
	st := ReplayState{Snapshot: s.store.Snapshot(t, window), Alerts: s.rows(), History: s.history(), Diagnosis: s.diag.Latest()}
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
// engine judging the same observations, (judging as recorded) the alert
// book the recorded transitions keep, and the diagnoser that says why at
// every step, from the same figures and alert states live had.
type replaySink struct {
	telemetry.Tee
	store       *telemetry.Store
	engine      *slo.Engine
	book        *alertBook // nil: the engine's judgement is shown
	resolvedFor time.Duration
	diag        *diagnosis.Diagnoser

	evalMu   sync.Mutex
	lastEval time.Time
	lastDiag time.Time
	step     time.Duration // the evaluation step of recording time (live's)
	next     time.Time     // the next step
}

// maxCatchUp bounds the evaluations a jump in recording time replays (a
// segment preamble's old lines, then the segment; a silent stretch):
// beyond it the engine's state rests only on the data in its windows.
const maxCatchUp = 10 * time.Minute

func newReplaySink(j Judging) *replaySink {
	st := telemetry.NewStore(j.Store)
	e := slo.New(j.Objectives, st, j.SLO)
	s := &replaySink{Tee: telemetry.Tee{st, e}, store: st, engine: e, resolvedFor: j.SLO.ResolvedFor,
		diag: diagnosis.New(j.Diagnosis), step: j.evalEvery()}
	if s.resolvedFor <= 0 {
		s.resolvedFor = 15 * time.Minute // slo.Options.ResolvedFor's default
	}
	// Judging as recorded, the book gives the alert states; judging
	// again, the engine's states depend on being evaluated as live was,
	// every step, also when a seek feeds minutes at once. The diagnosis
	// steps either way: its baselines and "since" learn step by step.
	if j.AsRecorded {
		s.book = newAlertBook(j.SLO.History)
	}
	return s
}

// Observe feeds o, evaluating and diagnosing first the steps it passes.
func (s *replaySink) Observe(o telemetry.Observation) {
	s.evaluateUntil(o.At)
	s.Tee.Observe(o)
}

// evaluateUntil evaluates (judging again) and diagnoses every step up to t.
func (s *replaySink) evaluateUntil(t time.Time) {
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	if s.next.IsZero() || t.Sub(s.next) > maxCatchUp {
		s.next = t.Truncate(s.step)
	}
	for ; !s.next.After(t); s.next = s.next.Add(s.step) {
		s.evaluateLocked(s.next, s.book == nil)
	}
}

// evaluateAt evaluates and diagnoses at t unless that was done at or
// after it: evaluation times never go back.
func (s *replaySink) evaluateAt(t time.Time) {
	s.evalMu.Lock()
	defer s.evalMu.Unlock()
	s.evaluateLocked(t, true)
}

// evaluateLocked is one evaluation at t, as live's EvaluateNow: the engine
// (when judge), then the diagnosis with the alert states shown. Judging
// as recorded, the steps between the views' reads need no engine: the
// book has the states, and the figures are the engine's at the read.
func (s *replaySink) evaluateLocked(t time.Time, judge bool) {
	if judge && t.After(s.lastEval) {
		s.engine.Evaluate(t)
		s.lastEval = t
	}
	if t.After(s.lastDiag) {
		s.diag.Update(s.store.Snapshot(t, s.diag.Window()), s.rows())
		s.lastDiag = t
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
