package record

import (
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// AlertFunc receives alert lines as a replay reaches them.
type AlertFunc func(at time.Time, alert json.RawMessage)

// AlertSink is a sink that also takes a recording's alert lines (the
// transitions live showed), to rebuild the alert state from them. It gets
// every alert line a replay reads, segment preambles included, in order.
type AlertSink interface {
	telemetry.Sink
	ObserveAlert(at time.Time, alert json.RawMessage)
}

// cursor is a reader with one entry of lookahead: the first entry past
// where feeding stopped.
type cursor struct {
	r    *Reader
	next *Entry
	last int64 // line of the last entry fed
	err  error // io.EOF or a *DamageError once the reader is done
}

// openCursor opens path at the segment holding from, rebuilding a stale
// index once and falling back to the start of the file.
func openCursor(path string, entries *[]indexEntry, from time.Time) (*cursor, error) {
	seg := segmentFor(*entries, from)
	r, err := openAt(path, seg)
	if errors.Is(err, errStaleIndex) {
		if fresh, serr := scanIndex(path); serr == nil {
			*entries = fresh
			seg = segmentFor(fresh, from)
			r, err = openAt(path, seg)
		}
		if errors.Is(err, errStaleIndex) {
			seg = indexEntry{}
			r, err = openAt(path, seg)
		}
	}
	if err != nil {
		return nil, err
	}
	return &cursor{r: r, last: seg.Line - 1}, nil
}

func (c *cursor) close() error { return c.r.Close() }

// peek returns the next entry without consuming it; nil at the end.
func (c *cursor) peek() *Entry {
	if c.next == nil && c.err == nil {
		e, err := c.r.NextEntry()
		if err != nil {
			c.err = err
			return nil
		}
		c.next = &e
	}
	return c.next
}

// take consumes the entry peek returned.
func (c *cursor) take() {
	if c.next != nil {
		c.last = c.next.Line
		c.next = nil
	}
}

// feedUntil feeds sink every entry up to t (preamble lines always).
func (c *cursor) feedUntil(sink telemetry.Sink, t time.Time, onAlert AlertFunc) {
	for e := c.peek(); e != nil && (e.State || !e.Observation.At.After(t)); e = c.peek() {
		deliver(e, sink, onAlert)
		c.take()
	}
}

// feedLines feeds sink every entry up to line (alerts go to the sink only,
// not to an AlertFunc: this rebuilds history behind a playback that
// already showed them).
func (c *cursor) feedLines(sink telemetry.Sink, line int64) {
	for e := c.peek(); e != nil && e.Line <= line; e = c.peek() {
		deliver(e, sink, nil)
		c.take()
	}
}

// damage returns the cursor's damage error, or nil at a clean end.
func (c *cursor) damage() error {
	if c.err == nil || errors.Is(c.err, io.EOF) {
		return nil
	}
	return c.err
}

func deliver(e *Entry, sink telemetry.Sink, onAlert AlertFunc) {
	if e.Observation.Kind == KindAlert {
		if as, ok := sink.(AlertSink); ok {
			as.ObserveAlert(e.Observation.At, e.Alert)
		}
		if onAlert != nil && !e.State {
			onAlert(e.Observation.At, e.Alert)
		}
		return
	}
	sink.Observe(e.Observation)
}

// Bounds returns the time of the first observation of a recording and of
// its last observation or alert transition (reading only its first and
// last segments when indexed). A recording that stops early (its writer
// killed) or is damaged gives the bounds of what is readable, and the
// *DamageError.
func Bounds(path string) (first, last time.Time, err error) {
	entries, err := loadIndex(path)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return bounds(path, &entries)
}

func bounds(path string, entries *[]indexEntry) (first, last time.Time, err error) {
	c, err := openCursor(path, entries, time.Time{})
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	for e := c.peek(); e != nil; e = c.peek() {
		c.take()
		if !e.State && e.Observation.Kind != KindAlert {
			first = e.Observation.At
			break
		}
	}
	if err := c.close(); err != nil {
		return first, last, err
	}
	// The last segment may hold only its preamble (just started) or be
	// damaged: walk back until one holds an observation.
	var damage error
	for i := len(*entries) - 1; i >= 0 && last.IsZero(); i-- {
		r, err := openAt(path, (*entries)[i])
		if err != nil {
			return first, last, err
		}
		cur := &cursor{r: r}
		for e := cur.peek(); e != nil; e = cur.peek() {
			cur.take()
			if !e.State && e.Observation.At.After(last) {
				last = e.Observation.At
			}
		}
		if damage == nil {
			damage = cur.damage()
		}
		if err := cur.close(); err != nil {
			return first, last, err
		}
	}
	return first, last, damage
}
