package record

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Writer defaults.
const (
	// DefaultFlushInterval bounds what a crash loses.
	DefaultFlushInterval = time.Second
	// DefaultSegment is the seek granularity: a seek replays at most one
	// segment more than it needs.
	DefaultSegment = time.Minute
	// maxPending bounds memory while the disk stalls; past it observations
	// are dropped (and counted) rather than blocking the sources.
	maxPending = 64 << 20
	// kickPending wakes the flusher early at high rates, keeping the
	// pending buffer small.
	kickPending = 1 << 20
)

// WriterOption configures NewWriter.
type WriterOption func(*Writer)

// WithLiveText keeps KindLiveText observations, which are skipped by
// default: they repeat the growing answer up to ten times a second and
// would dominate the file.
func WithLiveText() WriterOption { return func(w *Writer) { w.keepLive = true } }

// WithFlushInterval sets how often buffered lines reach the file.
func WithFlushInterval(d time.Duration) WriterOption {
	return func(w *Writer) {
		if d > 0 {
			w.flushEvery = d
		}
	}
}

// WithSegment sets the segment length (seek granularity).
func WithSegment(d time.Duration) WriterOption {
	return func(w *Writer) {
		if d > 0 {
			w.segment = d
		}
	}
}

// Writer records observations and alert transitions as JSON lines. It is
// a telemetry.Sink, safe for concurrent use, and never touches the disk in
// Observe: lines are encoded into memory and a flusher goroutine writes
// them every flush interval, so a crash loses at most that much and a slow
// disk never stalls a source.
type Writer struct {
	path       string
	keepLive   bool
	flushEvery time.Duration
	segment    time.Duration
	level      int

	mu       sync.Mutex
	pending  []byte
	cuts     []cut // segment starts within pending
	spare    []byte
	lines    int64 // lines encoded so far
	dlen     int64 // decompressed bytes encoded so far
	obs      int64 // observations encoded so far
	seq      int
	segEnd   time.Time // the current segment ends here
	state    stateLines
	settings Settings // as written so far
	dropped  int64
	err      error // first write error: the recording stops
	encErr   error // first observation that could not be encoded
	closed   bool
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}

	file *sink // owned by the flusher (and Close after it stopped)
}

// cut marks where a segment starts in the pending buffer.
type cut struct {
	pos   int
	entry indexEntry
}

// NewWriter creates path (refusing to overwrite an existing file: a
// recording is evidence) and its index path+".idx", writes the header and
// starts the flusher. The file is gzip-compressed when path ends in ".gz".
func NewWriter(path string, opts ...WriterOption) (*Writer, error) {
	w := &Writer{path: path, flushEvery: DefaultFlushInterval, segment: DefaultSegment, level: gzip.BestSpeed,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(w)
	}
	f, err := newSink(path, strings.HasSuffix(path, ".gz"), w.level)
	if err != nil {
		return nil, err
	}
	w.file = f
	w.state.resolvedMax = alertHistoryOf(Settings{})
	now := time.Now().UTC()
	w.mu.Lock()
	w.startSegment(now, true)
	err = w.err
	w.mu.Unlock()
	if err != nil {
		return nil, errors.Join(err, f.close())
	}
	go w.flusher()
	return w, nil
}

// Path returns the recording's path.
func (w *Writer) Path() string { return w.path }

// Observe records o (KindLiveText only WithLiveText). Times are written in
// UTC: the same instants, readable the same way in any time zone.
func (w *Writer) Observe(o telemetry.Observation) {
	if o.Kind == telemetry.KindLiveText && !w.keepLive {
		return
	}
	o.At = o.At.UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.accepting() {
		return
	}
	w.maybeSegment(o.At)
	start := len(w.pending)
	buf, err := encodeObservation(w.pending, o, false)
	if err != nil {
		// One observation JSON cannot hold is dropped and reported at
		// Close; the recording goes on.
		w.dropped++
		if w.encErr == nil {
			w.encErr = fmt.Errorf("record: encode %s observation: %w", o.Kind, err)
		}
		return
	}
	w.pending = buf
	w.lines++
	w.dlen += int64(len(buf) - start)
	w.obs++
	w.state.update(o, buf[start:])
	w.maybeKick()
}

// WriteAlert records an alert transition (an slo.Transition, or anything
// JSON-encodable) at its time as {"kind":"alert","at":…,"alert":…}. Only
// WriteTransition's lines are repeated in segment preambles.
func (w *Writer) WriteAlert(at time.Time, transition any) error {
	return w.writeAlert(at, transition, nil)
}

// WriteTransition records an SLO alert transition at its time. Each
// segment's preamble repeats the latest transition of every alert and the
// last resolved ones, so a replay starting there has the alert state and
// history live had.
func (w *Writer) WriteTransition(tr slo.Transition) error { return w.writeAlert(tr.At, tr, &tr) }

func (w *Writer) writeAlert(at time.Time, transition any, tr *slo.Transition) error {
	raw, err := json.Marshal(transition)
	if err != nil {
		return fmt.Errorf("record: encode alert: %w", err)
	}
	at = at.UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.accepting() {
		if w.err != nil {
			return w.err
		}
		return errors.New("record: writer closed")
	}
	w.maybeSegment(at)
	start := len(w.pending)
	w.appendLine(line{Observation: telemetry.Observation{Kind: KindAlert, At: at}, Alert: raw})
	if tr != nil && w.err == nil {
		w.state.updateAlert(tr.Alert.Objective, tr.Alert.Endpoint, tr.Alert.Severity, tr.To == slo.Resolved, w.pending[start:])
	}
	w.maybeKick()
	return w.err
}

// accepting reports whether lines may be added, counting a drop if the
// buffer is full. Call with w.mu held.
func (w *Writer) accepting() bool {
	if w.closed {
		return false
	}
	if w.err != nil {
		w.dropped++
		return false
	}
	if len(w.pending) > maxPending {
		w.dropped++
		return false
	}
	return true
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// appendLine encodes a non-observation line. Call with w.mu held.
func (w *Writer) appendLine(l line) {
	start := len(w.pending)
	buf, err := appendJSON(w.pending, &l)
	if err != nil {
		w.fail(fmt.Errorf("record: encode %s line: %w", l.Kind, err))
		return
	}
	w.pending = buf
	w.lines++
	w.dlen += int64(len(buf) - start)
}

// maybeSegment starts a new segment when at has passed the current one.
// Call with w.mu held.
func (w *Writer) maybeSegment(at time.Time) {
	if at.Before(w.segEnd) {
		return
	}
	w.seq++
	w.startSegment(at, false)
}

// startSegment writes a checkpoint line and the state preamble, and marks
// the cut where the flusher starts a new gzip member. The first segment
// also holds the header. Call with w.mu held.
func (w *Writer) startSegment(at time.Time, header bool) {
	boundary := at.Truncate(w.segment)
	w.segEnd = boundary.Add(w.segment)
	if header {
		// Segment 0 holds only the header: its time is "the start", and
		// the first observation, whatever its time, opens segment 1.
		boundary, w.segEnd = time.Time{}, time.Time{}
	}
	w.cuts = append(w.cuts, cut{pos: len(w.pending), entry: indexEntry{
		Seq: w.seq, At: boundary, DOffset: w.dlen, Line: w.lines + 1, Observations: w.obs}})
	if header {
		w.appendLine(headerLine(at))
	}
	w.appendLine(checkpointLine(boundary, w.seq, w.lines+1, w.obs))
	for _, b := range w.state.lines() {
		// The stored line is the observation's own; mark it as state.
		w.pending = append(w.pending, statePrefix...)
		w.pending = append(w.pending, b[1:]...)
		w.lines++
		w.dlen += int64(len(statePrefix) + len(b) - 1)
	}
}

func (w *Writer) maybeKick() {
	if len(w.pending) < kickPending {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// flusher writes pending lines every flush interval until Close.
func (w *Writer) flusher() {
	defer close(w.done)
	t := time.NewTicker(w.flushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		case <-w.kick:
		}
		w.flush()
	}
}

// flush moves the pending lines to the file: a gzip member per segment,
// then gzip.Flush and bufio.Flush so everything so far is readable.
func (w *Writer) flush() {
	w.mu.Lock()
	buf, cuts := w.pending, w.cuts
	w.pending, w.cuts, w.spare = w.spare[:0], nil, nil
	failed := w.err != nil
	w.mu.Unlock()
	if failed || (len(buf) == 0 && len(cuts) == 0) {
		w.recycle(buf)
		return
	}
	err := w.file.write(buf, cuts)
	if err == nil {
		err = w.file.flush()
	}
	w.mu.Lock()
	if err != nil {
		w.fail(err)
	}
	w.mu.Unlock()
	w.recycle(buf)
}

func (w *Writer) recycle(buf []byte) {
	w.mu.Lock()
	if cap(buf) <= 4*kickPending {
		w.spare = buf[:0]
	}
	w.mu.Unlock()
}

// backlog is the size of the lines not yet handed to the file (for
// generators that must not outrun the flusher).
func (w *Writer) backlog() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// Stats reports what was written and dropped.
type Stats struct {
	Lines, Observations, Dropped int64
}

// Stats returns the writer's counts so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return Stats{Lines: w.lines, Observations: w.obs, Dropped: w.dropped}
}

// Close writes the closing line, flushes everything, ends the gzip stream, syncs and closes the
// files. It returns the first error met while recording, including
// observations dropped because the disk could not keep up.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errors.New("record: writer already closed")
	}
	w.closed = true
	if w.err == nil {
		// The closing line: without it a reader knows the recording was
		// cut, even on a line boundary.
		w.appendLine(line{Observation: telemetry.Observation{Kind: kindEnd, At: time.Now().UTC()}, LineNo: w.lines + 1, Observations: w.obs})
	}
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.flush()
	cerr := w.file.close()
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	if err == nil {
		err = cerr
	}
	if err == nil {
		err = w.encErr
	}
	if err == nil && w.dropped > 0 {
		err = fmt.Errorf("record: %d observations dropped (disk too slow or full)", w.dropped)
	}
	return err
}
