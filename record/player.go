package record

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Fastest is the speed that plays without pacing.
const Fastest = math.MaxFloat64

// Player defaults.
const (
	// DefaultHistory matches telemetry's longest window (MaxWindow), so
	// after a seek every window the dashboard offers is complete.
	DefaultHistory = time.Hour
	// DefaultWindow is the dashboard's default window: the first frame
	// after a seek is exact for it.
	DefaultWindow = 5 * time.Minute
)

// PlayerOptions configures a Player.
type PlayerOptions struct {
	// NewSink returns a fresh sink (a telemetry.Store) for the start and
	// each seek, since a store cannot be rewound. Required.
	NewSink func() telemetry.Sink
	// Speed: 1 is real time (the default), 10 ten times faster, Fastest
	// without pacing.
	Speed float64
	// Window is the span before a seek point replayed before Seek returns,
	// so the first frame is exact for windows up to it (default 5 min).
	// History (default 1 h) is then replayed into another fresh sink in
	// the background, which replaces the first one when it has caught up:
	// a seek in a day of recording shows its first frame in a fraction of
	// a second and has the full hour shortly after.
	Window, History time.Duration
	// OnAlert receives alert lines as the replay reaches them (including
	// those inside a seek's replayed window). It must not call the Player.
	OnAlert AlertFunc
	// StopAtEnd makes Run return at the end of the recording; by default
	// it holds there (the dashboard keeps the last state, a seek goes on).
	StopAtEnd bool
}

// Player plays a recording into a sink at a chosen speed, with pause and
// seek, and keeps the replay's clock so views show times as they were.
// Its methods are safe for concurrent use.
type Player struct {
	path    string
	opts    PlayerOptions
	now     func() time.Time
	after   func(time.Duration) <-chan time.Time
	entries []indexEntry // guarded by seekMu
	first   time.Time
	ending  *DamageError // how an unclosed or damaged recording ends (Bounds), nil for a closed one
	last    time.Time

	seekMu sync.Mutex // serialises seeks and Close

	mu       sync.Mutex
	sink     telemetry.Sink
	cur      *cursor
	clock    time.Time // replay time of the last delivery or the seek point
	baseWall time.Time // pacing: baseRec was current at baseWall
	baseRec  time.Time
	speed    float64
	paused   bool
	gen      int
	stopFill context.CancelFunc // cancels this generation's history fill
	fills    sync.WaitGroup     // every fill goroutine, for Close
	wake     chan struct{}
	closed   bool
}

// NewPlayer opens path, positioned at its first observation.
func NewPlayer(path string, opts PlayerOptions) (*Player, error) {
	return newPlayer(path, opts, time.Now, time.After)
}

func newPlayer(path string, opts PlayerOptions, now func() time.Time, after func(time.Duration) <-chan time.Time) (*Player, error) {
	if opts.NewSink == nil {
		return nil, errors.New("record: PlayerOptions.NewSink is required")
	}
	if opts.Speed <= 0 {
		opts.Speed = 1
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.History <= 0 {
		opts.History = DefaultHistory
	}
	entries, err := loadIndex(path)
	if err != nil {
		return nil, err
	}
	first, last, berr := bounds(path, &entries)
	if first.IsZero() && berr != nil {
		return nil, berr // not even one observation readable
	}
	p := &Player{path: path, opts: opts, now: now, after: after, entries: entries, first: first, last: last,
		speed: opts.Speed, wake: make(chan struct{}, 1)}
	if d := (*DamageError)(nil); errors.As(berr, &d) {
		p.ending = d
	}
	if err := p.Seek(first); err != nil && !isDamage(err) {
		return nil, err
	}
	return p, nil
}

func isDamage(err error) bool {
	var d *DamageError
	return errors.As(err, &d)
}

// Ending returns how the recording ends when it does not end as a closed
// one (its writer killed, the disk filled, damage: a *DamageError whose
// LastAt is where playback stops), or nil (as of NewPlayer). A replay's
// header can say it beside the bounds.
func (p *Player) Ending() *DamageError { return p.ending }

// Cut reports whether the recording has no proper end (Ending is not
// nil): the replay's header says so at its last moment.
func (p *Player) Cut() bool { return p.ending != nil }

// Bounds returns the times of the recording's first and last observation
// (as of NewPlayer).
func (p *Player) Bounds() (first, last time.Time) { return p.first, p.last }

// Sink returns the sink the replay currently feeds; a view must read it
// on every frame, since a seek (and the history fill) replaces it.
func (p *Player) Sink() telemetry.Sink {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sink
}

// Clock returns the replay's current time: between observations it runs
// at the playback speed, so ages and staleness look as they did.
func (p *Player) Clock() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clockLocked()
}

func (p *Player) clockLocked() time.Time {
	if p.paused || p.speed >= Fastest || p.cur == nil || p.closed {
		return p.clock
	}
	next := p.cur.peek()
	if next == nil {
		return p.clock // at the end
	}
	c := p.baseRec.Add(time.Duration(float64(p.now().Sub(p.baseWall)) * p.speed))
	if c.After(next.Observation.At) && next.Observation.At.After(p.clock) {
		c = next.Observation.At // never run ahead of data not yet delivered
	}
	if c.Before(p.clock) {
		c = p.clock
	}
	return c
}

// rebaseLocked restarts pacing from the current replay time.
func (p *Player) rebaseLocked() {
	p.baseRec, p.baseWall = p.clockLocked(), p.now()
}

// Pause stops the replay clock and deliveries.
func (p *Player) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.clock = p.clockLocked()
		p.paused = true
	}
	p.signal()
}

// Resume continues after Pause.
func (p *Player) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		p.baseRec, p.baseWall = p.clock, p.now()
	}
	p.signal()
}

// Paused reports whether the replay is paused.
func (p *Player) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// SetSpeed changes the speed (1, 10, Fastest; ≤ 0 means 1).
func (p *Player) SetSpeed(speed float64) {
	if speed <= 0 {
		speed = 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rebaseLocked()
	p.speed = speed
	p.signal()
}

// Speed returns the current speed.
func (p *Player) Speed() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.speed
}

func (p *Player) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Seek moves the replay to t: a fresh sink is fed, as fast as possible,
// from the segment holding t − Window up to t, and replaces the current
// one; then the history before that is filled in the background. It
// returns once the state at t is in Sink(), or the damage that stopped the
// replay before t (everything before the damage is in Sink()).
func (p *Player) Seek(t time.Time) error {
	p.seekMu.Lock()
	defer p.seekMu.Unlock()
	if p.isClosed() {
		return errors.New("record: player closed")
	}
	sink := p.opts.NewSink()
	c, err := openCursor(p.path, &p.entries, t.Add(-p.opts.Window))
	if err != nil {
		return err
	}
	c.feedUntil(sink, t, p.opts.OnAlert)
	var damage error
	if c.peek() == nil {
		damage = c.damage() // before Run can use c
	}

	p.mu.Lock()
	old := p.cur
	p.stopFillLocked()
	p.gen++
	p.sink, p.cur, p.clock = sink, c, t
	p.baseRec, p.baseWall = t, p.now()
	if p.opts.History > p.opts.Window && c.last > 0 {
		p.startFillLocked(t, p.gen)
	}
	p.signal()
	p.mu.Unlock()
	var cerr error
	if old != nil {
		cerr = old.close()
	}
	return errors.Join(damage, cerr)
}

func (p *Player) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// startFillLocked replays History before t into another fresh sink and
// swaps it in once it has caught up with playback.
func (p *Player) startFillLocked(t time.Time, gen int) {
	ctx, cancel := context.WithCancel(context.Background())
	p.stopFill = cancel
	entries := append([]indexEntry(nil), p.entries...)
	p.fills.Add(1)
	go func() {
		defer p.fills.Done()
		p.runFill(ctx, entries, t.Add(-p.opts.History), gen)
	}()
}

func (p *Player) stopFillLocked() {
	if p.stopFill != nil {
		p.stopFill()
		p.stopFill = nil
	}
}

// catchUpLines is how far behind playback the fill may be when it takes
// the lock to finish: small, so playback barely pauses.
const catchUpLines = 4096

func (p *Player) runFill(ctx context.Context, entries []indexEntry, from time.Time, gen int) {
	c, err := openCursor(p.path, &entries, from)
	if err != nil {
		return // the first sink stays: partial history, never wrong data
	}
	defer func() {
		// Read-only file: nothing to recover from a close error.
		_ = c.close()
	}()
	sink := p.opts.NewSink()
	for {
		p.mu.Lock()
		if p.gen != gen || ctx.Err() != nil {
			p.mu.Unlock()
			return
		}
		target := p.cur.last
		next := c.peek()
		if next == nil && c.damage() != nil && c.last < target {
			p.mu.Unlock()
			return // damaged before playback's position: keep the first sink
		}
		if next == nil || next.Line > target-catchUpLines {
			// Close enough: finish under the lock (playback waits for
			// at most catchUpLines) and take over.
			c.feedLines(sink, target)
			p.sink = sink
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		// Feed in slices so a seek or Close is noticed quickly; always
		// past the next entry, so every round makes progress.
		c.feedLines(sink, min(target, max(c.last, next.Line)+64*catchUpLines))
	}
}

// Run plays until ctx ends (returns nil), or, with StopAtEnd, until the
// end of the recording (nil, or the *DamageError that ended it).
func (p *Player) Run(ctx context.Context) error {
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil
		}
		var next *Entry
		if !p.paused {
			next = p.cur.peek()
		}
		if next == nil {
			atEnd := !p.paused
			err := p.cur.damage()
			p.mu.Unlock()
			if atEnd && p.opts.StopAtEnd {
				return err
			}
			select { // paused or at the end: wait for Resume or Seek
			case <-p.wake:
			case <-ctx.Done():
				return nil
			}
			continue
		}
		delay := p.delayLocked(next.Observation.At)
		gen := p.gen
		if delay <= 0 {
			p.deliverLocked(next)
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		select {
		case <-p.after(delay):
		case <-p.wake: // speed, pause or seek changed: re-evaluate
			continue
		case <-ctx.Done():
			return nil
		}
		p.mu.Lock()
		if gen == p.gen && !p.paused && !p.closed && p.cur.peek() == next {
			p.deliverLocked(next)
		}
		p.mu.Unlock()
	}
}

// delayLocked is how long to wait before delivering an entry at "at".
func (p *Player) delayLocked(at time.Time) time.Duration {
	if p.speed >= Fastest || !at.After(p.baseRec) {
		return 0
	}
	due := p.baseWall.Add(time.Duration(float64(at.Sub(p.baseRec)) / p.speed))
	return due.Sub(p.now())
}

func (p *Player) deliverLocked(e *Entry) {
	deliver(e, p.sink, p.opts.OnAlert)
	if !e.State && e.Observation.At.After(p.clock) {
		p.clock = e.Observation.At
	}
	p.cur.take()
}

// Close stops the player and its background fill and closes the file.
func (p *Player) Close() error {
	p.seekMu.Lock()
	defer p.seekMu.Unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.stopFillLocked()
	c := p.cur
	p.signal()
	p.mu.Unlock()
	p.fills.Wait()
	if c == nil {
		return nil
	}
	if err := c.close(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
