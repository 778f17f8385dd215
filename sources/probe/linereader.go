package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// stampReader records when each Read of the response body returned data,
// so an event can be stamped with the arrival of its first byte even when
// several events were coalesced into one read and parsed later.
type stampReader struct {
	r     io.Reader
	start time.Time
	total int64
	marks [16]readMark // ring of the latest reads
	n     int
}

type readMark struct {
	end int64         // body offset just past the last byte of this read
	at  time.Duration // when the read returned, since start
}

func (s *stampReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.total += int64(n)
		s.marks[s.n%len(s.marks)] = readMark{end: s.total, at: time.Since(s.start)}
		s.n++
	}
	return n, err
}

// arrival returns when the byte at body offset off was read. Offsets older
// than the ring get the oldest mark kept (only very long lines assembled
// from many small reads get there, and only their first byte matters).
func (s *stampReader) arrival(off int64) time.Duration {
	at := time.Duration(-1)
	for i := 0; i < min(s.n, len(s.marks)); i++ {
		m := s.marks[(s.n-1-i)%len(s.marks)]
		if m.end <= off {
			break
		}
		at = m.at
	}
	if at < 0 {
		return time.Since(s.start)
	}
	return at
}

// errLineTooLong reports a line over the cap.
type errLineTooLong struct{ limit int }

func (e errLineTooLong) Error() string {
	return fmt.Sprintf("a stream line exceeds the %d-byte line cap", e.limit)
}

// lineReader splits the body into lines (LF, CRLF or bare CR) with no
// 64 KiB limit: lines up to max bytes are assembled, longer ones fail.
type lineReader struct {
	sr      *stampReader
	br      *bufio.Reader
	max     int
	long    []byte
	pending []byte // rest of a line split at bare CRs
	pendAt  time.Duration
	eof     bool
}

func newLineReader(r io.Reader, start time.Time, maxLine int) *lineReader {
	sr := &stampReader{r: r, start: start}
	// 2 KiB holds any ordinary event; longer lines are assembled in long.
	return &lineReader{sr: sr, br: bufio.NewReaderSize(sr, 2048), max: maxLine}
}

// next returns the next line without its terminator, valid until the next
// call, and when its first byte arrived. It returns io.EOF after the last.
func (lr *lineReader) next() ([]byte, time.Duration, error) {
	if lr.pending != nil {
		return lr.splitCR(lr.pending, lr.pendAt)
	}
	if lr.eof {
		return nil, 0, io.EOF
	}
	if cap(lr.long) > 64<<10 {
		lr.long = nil // do not keep a huge buffer alive for the rest of the stream
	}
	lr.long = lr.long[:0]
	// The first byte of this line is either buffered already (its read
	// has a mark) or comes with the next read.
	off := lr.sr.total - int64(lr.br.Buffered())
	var at time.Duration
	stamped := false
	for {
		frag, err := lr.br.ReadSlice('\n')
		if !stamped && len(frag) > 0 {
			at, stamped = lr.sr.arrival(off), true
		}
		switch {
		case err == nil:
			line := frag
			if len(lr.long) > 0 {
				lr.long = append(lr.long, frag...)
				line = lr.long
			}
			if len(line) > lr.max+2 {
				return nil, 0, errLineTooLong{lr.max}
			}
			return lr.splitCR(trimEOL(line), at)
		case errors.Is(err, bufio.ErrBufferFull):
			lr.long = append(lr.long, frag...)
			if len(lr.long) > lr.max {
				return nil, 0, errLineTooLong{lr.max}
			}
		case errors.Is(err, io.EOF):
			lr.eof = true
			line := append(lr.long, frag...)
			lr.long = line
			if len(line) == 0 {
				return nil, 0, io.EOF
			}
			if len(line) > lr.max {
				return nil, 0, errLineTooLong{lr.max}
			}
			return lr.splitCR(trimEOL(line), at)
		default:
			return nil, 0, err
		}
	}
}

// splitCR returns the part of line before a bare CR and keeps the rest
// for the next call: CR alone is a legal SSE line end.
func (lr *lineReader) splitCR(line []byte, at time.Duration) ([]byte, time.Duration, error) {
	i := bytes.IndexByte(line, '\r')
	if i < 0 {
		lr.pending = nil
		return line, at, nil
	}
	lr.pending, lr.pendAt = line[i+1:], at
	return line[:i], at, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// frame is one event as the framing delimits it.
type frame struct {
	name         []byte // SSE event field; nil when absent
	data         []byte
	at           time.Duration // arrival of the event's first byte, since start
	comment      bool          // SSE comment (keep-alive); carries nothing
	unterminated bool          // dispatched at EOF without its closing blank line
}

type framer interface {
	next() (frame, error)
}

// sseFramer implements the WHATWG event-stream rules ttftop needs:
// event/data fields, optional space after the colon, multi-line data,
// comments, and a final event without its blank line dispatched at EOF.
type sseFramer struct {
	lr         *lineReader
	name, data []byte
}

func (s *sseFramer) next() (frame, error) {
	s.name, s.data = s.name[:0], s.data[:0]
	var (
		started, hasData, hasName bool
		at                        time.Duration
	)
	for {
		line, lat, err := s.lr.next()
		if errors.Is(err, io.EOF) {
			if hasData {
				return s.frame(hasName, at, true), nil
			}
			return frame{}, io.EOF
		}
		if err != nil {
			return frame{}, err
		}
		if len(line) == 0 {
			if hasData {
				return s.frame(hasName, at, false), nil
			}
			// A blank line ends an event; one without data is not dispatched.
			started, hasName = false, false
			s.name = s.name[:0]
			continue
		}
		if line[0] == ':' {
			if !started {
				return frame{comment: true, at: lat}, nil
			}
			continue
		}
		if !started {
			started, at = true, lat
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			s.name, hasName = append(s.name[:0], value...), true
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data, hasData = append(s.data, value...), true
		}
	}
}

func (s *sseFramer) frame(hasName bool, at time.Duration, unterminated bool) frame {
	f := frame{data: s.data, at: at, unterminated: unterminated}
	if hasName {
		f.name = s.name
	}
	return f
}

// ndjsonFramer yields each non-blank line as an event (Ollama).
type ndjsonFramer struct {
	lr   *lineReader
	data []byte
}

func (n *ndjsonFramer) next() (frame, error) {
	for {
		line, at, err := n.lr.next()
		if err != nil {
			return frame{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n.data = append(n.data[:0], line...)
		return frame{data: n.data, at: at, unterminated: n.lr.eof}, nil
	}
}
