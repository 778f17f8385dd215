package record

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// maxLineBytes bounds one line; a longer one is damage, not a reason to
// read the rest of a corrupt file into memory.
const maxLineBytes = 64 << 20

// statePrefix starts every preamble line the writer produces.
const statePrefix = `{"state":true,`

// DamageError says where a recording stopped being readable and what was
// replayed before that point.
type DamageError struct {
	Line     int64     // number of the damaged line (1-based)
	Offset   int64     // its byte offset; in .gz files, in the decompressed stream
	Replayed int64     // observations before it
	LastAt   time.Time // time of the last observation or alert read before it (Bounds' last)
	Err      error
}

func (e *DamageError) Error() string {
	up := ""
	if !e.LastAt.IsZero() {
		up = " up to " + e.LastAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	if errors.Is(e.Err, errNoClosingRecord) {
		return fmt.Sprintf("recording ends at %s without its closing record (the recorder was killed or crashed); replayed %d observations up to there",
			e.LastAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"), e.Replayed)
	}
	if e.Unfinished() {
		return fmt.Sprintf("recording stops at line %d (byte %d): %v; replayed %d observations%s: "+
			"everything before is intact, the file was not closed (its writer was killed, or the disk filled)",
			e.Line, e.Offset, e.Err, e.Replayed, up)
	}
	return fmt.Sprintf("recording damaged at line %d (byte %d): %v; replayed %d observations%s", e.Line, e.Offset, e.Err, e.Replayed, up)
}

// Unfinished reports whether the recording simply ends early (a gzip
// stream without its end, a last line cut short), as a writer stopped
// before Close leaves it, rather than holding bytes that are wrong.
func (e *DamageError) Unfinished() bool {
	return errors.Is(e.Err, io.ErrUnexpectedEOF) || errors.Is(e.Err, errCutLine) || errors.Is(e.Err, errNoClosingRecord)
}

// errNoClosingRecord: a recording of a version that ends with a closing
// line ends, on a line boundary, without it.
var errNoClosingRecord = errors.New("no closing record")

func (e *DamageError) Unwrap() error { return e.Err }

// Entry is one line of a recording: an observation, or an alert
// transition (Observation.Kind == KindAlert, Observation.At its time).
type Entry struct {
	Line        int64
	Observation telemetry.Observation
	Alert       json.RawMessage // alert lines only
	// State marks a segment preamble line: an earlier observation
	// repeated so that reading can start at this segment.
	State bool
}

// Reader reads a recording in order; lines are read and decoded ahead by
// background goroutines (see pipeline), so Close must be called. A Reader
// is not safe for concurrent use.
type Reader struct {
	f        *os.File
	src      *lineSource
	pipe     *pipeline // nil until the first read after checkStart
	obs      int64     // observations before the current position
	lastAt   time.Time
	err      error
	preamble bool      // return the state lines of the segment reading started at
	cps      int       // checkpoints read
	cur      []decoded // decoded lines not yet consumed
	tail     error     // what ended reading after cur
	in       interner

	version int   // of the header; read apart when reading starts at a later segment
	closed  bool  // the closing line was read
	lastNo  int64 // number of the last line read

	settings    Settings // merged from the settings lines read so far
	hasSettings bool
	settingsErr error // a settings line that did not decode
}

// Open opens a recording (plain or gzip, told by its first bytes) at its
// start.
func Open(path string) (*Reader, error) {
	return openAt(path, indexEntry{})
}

// openAt opens a recording at a segment. Reading from the start skips the
// state preambles (the original lines have been read); reading from a
// later segment returns that segment's preamble first.
func openAt(path string, seg indexEntry) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if _, err := f.Seek(seg.Offset, io.SeekStart); err != nil {
		return nil, errors.Join(fmt.Errorf("record: %w", err), f.Close())
	}
	r := &Reader{f: f, obs: seg.Observations, preamble: seg.Offset > 0}
	r.src = &lineSource{line: max(seg.Line-1, 0), off: seg.DOffset}
	raw := bufio.NewReaderSize(f, 256<<10)
	if magic, err := raw.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(raw)
		if err != nil {
			r.src.br = bufio.NewReader(bytes.NewReader(nil))
			r.src.err = r.src.damage(r.src.line+1, r.src.off, err)
		} else {
			r.src.br = bufio.NewReaderSize(gz, 256<<10)
		}
	} else {
		r.src.br = raw
	}
	if seg.Offset > 0 {
		if err := r.checkStart(seg); err != nil {
			return nil, errors.Join(err, f.Close())
		}
		if r.version, err = headerVersion(path); err != nil {
			return nil, errors.Join(err, f.Close())
		}
	}
	return r, nil
}

// errStaleIndex: the index does not match the file (rewritten, or
// another file's); the caller rebuilds it by scanning.
var errStaleIndex = errors.New("record: index does not match the recording")

// checkStart reads the checkpoint a segment must start with.
func (r *Reader) checkStart(seg indexEntry) error {
	b, _, _, err := r.src.next()
	var l line
	if err != nil || decodeLine(b, &l, &r.in) != nil {
		return errStaleIndex
	}
	if l.Kind != kindCheckpoint || l.Seq != seg.Seq || l.LineNo != seg.Line || l.Observations != seg.Observations {
		return errStaleIndex
	}
	r.cps = 1
	return nil
}

// Close stops the read-ahead and closes the file. (gzip.Reader.Close
// holds no resource; it only repeats a decompression error, which Next
// has already reported as damage.)
func (r *Reader) Close() error {
	if r.pipe != nil {
		r.pipe.stop()
	}
	return r.f.Close()
}

// Next returns the next observation, skipping alert lines. At the end it
// returns io.EOF; at damage a *DamageError, after everything before it.
func (r *Reader) Next() (telemetry.Observation, error) {
	for {
		e, err := r.NextEntry()
		if err != nil {
			return telemetry.Observation{}, err
		}
		if e.Observation.Kind != KindAlert {
			return e.Observation, nil
		}
	}
}

// NextEntry returns the next observation or alert line.
func (r *Reader) NextEntry() (Entry, error) {
	for {
		if r.err != nil {
			return Entry{}, r.err
		}
		if len(r.cur) == 0 {
			if r.pipe == nil {
				r.pipe = startPipeline(r.src, r.preamble, r.cps)
			}
			if r.tail != nil {
				r.err = r.fill(r.atEnd(r.tail))
				continue
			}
			r.cur, r.tail = r.pipe.next()
			continue
		}
		d := &r.cur[0]
		r.cur = r.cur[1:]
		if d.err != nil {
			r.err = r.fill(d.err)
			continue
		}
		r.lastNo = d.no
		if d.skip {
			continue
		}
		if e, ok := r.accept(d); ok {
			return e, nil
		}
	}
}

// accept applies a decoded line to the reader's state and returns the
// entry it yields, if any.
func (r *Reader) accept(d *decoded) (Entry, bool) {
	l := &d.l
	switch l.Kind {
	case kindEnd:
		r.closed = true
		return Entry{}, false
	case kindHeader:
		r.version = l.Version
		if l.Format != FormatName || l.Version < 1 || l.Version > FormatVersion {
			r.err = fmt.Errorf("record: not a ttftop recording of a version this build reads (format %q, version %d)", l.Format, l.Version)
		}
		return Entry{}, false
	case kindCheckpoint:
		if l.LineNo != d.no || l.Observations != r.obs {
			r.err = r.fill(&DamageError{Line: d.no, Offset: d.off,
				Err: fmt.Errorf("checkpoint says line %d after %d observations, found line %d after %d", l.LineNo, l.Observations, d.no, r.obs)})
			return Entry{}, false
		}
		r.cps++
		return Entry{}, false
	case kindSettings:
		var st Settings
		if err := json.Unmarshal(l.Settings, &st); err != nil {
			if r.settingsErr == nil {
				r.settingsErr = fmt.Errorf("record: settings at line %d: %w", d.no, err)
			}
			return Entry{}, false
		}
		r.settings.merge(st)
		r.hasSettings = true
		return Entry{}, false
	case KindAlert:
		if l.State && (!r.preamble || r.cps != 1) {
			return Entry{}, false
		}
		if !l.State && l.At.After(r.lastAt) {
			r.lastAt = l.At
		}
		return Entry{Line: d.no, Observation: telemetry.Observation{Kind: KindAlert, At: l.At}, Alert: l.Alert, State: l.State}, true
	}
	if l.State {
		if !r.preamble || r.cps != 1 {
			return Entry{}, false // the original lines were read, or will not be needed
		}
		return Entry{Line: d.no, Observation: l.observation(), State: true}, true
	}
	r.obs++
	if l.At.After(r.lastAt) {
		r.lastAt = l.At
	}
	return Entry{Line: d.no, Observation: l.observation()}, true
}

// atEnd turns a clean end into damage where the recording should have
// ended with a closing line and did not.
func (r *Reader) atEnd(err error) error {
	if !errors.Is(err, io.EOF) || r.closed || r.version < closingSince {
		return err
	}
	return &DamageError{Line: r.lastNo + 1, Offset: r.src.off, Err: errNoClosingRecord}
}

// Version returns the format version of the recording at path (0 if its
// header does not decode). Recordings before version 3 have no closing
// line, so one cut on a line boundary cannot be told from a finished one.
func Version(path string) (int, error) { return headerVersion(path) }

// headerVersion reads the format version from the header of the
// recording at path (0 if it has none that decodes).
func headerVersion(path string) (int, error) {
	r, err := openAt(path, indexEntry{})
	if err != nil {
		return 0, err
	}
	b, _, _, err := r.src.next()
	var l line
	if err == nil && decodeLine(b, &l, &r.in) == nil && l.Kind == kindHeader {
		return l.Version, r.Close()
	}
	return 0, r.Close()
}

// fill completes a damage error with what the consumer read before it.
func (r *Reader) fill(err error) error {
	var d *DamageError
	if errors.As(err, &d) {
		c := *d
		c.Replayed, c.LastAt = r.obs, r.lastAt
		return &c
	}
	return err
}

// errCutLine: the file ends inside a line.
var errCutLine = errors.New("unexpected end of file in the middle of a line")

// lineSource splits the decompressed stream into lines, counting line
// numbers and offsets. Its errors are io.EOF or a *DamageError (without
// the consumer's counts).
type lineSource struct {
	br   *bufio.Reader
	line int64 // number of the last line read
	off  int64 // decompressed offset of the next line
	err  error
	buf  []byte
	in   interner
}

// next returns the next line without its newline, with its number and
// offset; the bytes are valid until the next call. A last line without a
// newline is accepted when it decodes (the crash came between the line
// and its newline); otherwise it is a half-written line: damage.
func (s *lineSource) next() (b []byte, no, off int64, err error) {
	if s.err != nil {
		return nil, 0, 0, s.err
	}
	s.buf = s.buf[:0]
	for {
		chunk, err := s.br.ReadSlice('\n')
		s.buf = append(s.buf, chunk...)
		switch {
		case err == nil:
			s.line++
			off := s.off
			s.off += int64(len(s.buf))
			return s.buf[:len(s.buf)-1], s.line, off, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(s.buf) > maxLineBytes {
				s.err = s.damage(s.line+1, s.off, fmt.Errorf("line longer than %d bytes", maxLineBytes))
				return nil, 0, 0, s.err
			}
		case errors.Is(err, io.EOF) && len(s.buf) == 0:
			s.err = io.EOF
			return nil, 0, 0, s.err
		case errors.Is(err, io.EOF):
			s.line++
			var l line
			if decodeLine(s.buf, &l, &s.in) == nil {
				off := s.off
				s.off += int64(len(s.buf))
				s.err = io.EOF
				return s.buf, s.line, off, nil
			}
			s.err = s.damage(s.line, s.off, errCutLine)
			return nil, 0, 0, s.err
		default:
			// gzip: io.ErrUnexpectedEOF (cut file), checksum or header
			// errors (garbage); plain: an I/O error.
			s.err = s.damage(s.line+1, s.off, err)
			return nil, 0, 0, s.err
		}
	}
}

func (s *lineSource) damage(line, off int64, err error) *DamageError {
	return &DamageError{Line: line, Offset: off, Err: err}
}
