package record

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// sink is the file side of a Writer: file ← bufio ← gzip (one member per
// segment) ← lines, plus the index. Only the flusher (then Close) uses it.
type sink struct {
	f     *os.File
	cw    *countingWriter
	bw    *bufio.Writer
	gz    *gzip.Writer // nil for plain files
	level int
	idx   *os.File
}

type countingWriter struct {
	f *os.File
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

func newSink(path string, compress bool, level int) (*sink, error) {
	if compress {
		// Check the level now rather than at the first segment.
		if _, err := gzip.NewWriterLevel(nil, level); err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	idx, err := os.OpenFile(indexPath(path), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("record: %w", err), f.Close())
	}
	cw := &countingWriter{f: f}
	s := &sink{f: f, cw: cw, bw: bufio.NewWriterSize(cw, 256<<10), level: level, idx: idx}
	if compress {
		s.gz, _ = gzip.NewWriterLevel(s.bw, level) // level checked above
	}
	return s, nil
}

// write writes buf, starting a segment (a new gzip member, an index entry)
// at each cut.
func (s *sink) write(buf []byte, cuts []cut) error {
	prev := 0
	for _, c := range cuts {
		if err := s.data(buf[prev:c.pos]); err != nil {
			return err
		}
		prev = c.pos
		if err := s.startMember(); err != nil {
			return err
		}
		c.entry.Offset = s.cw.n + int64(s.bw.Buffered())
		b, err := json.Marshal(c.entry)
		if err != nil {
			return fmt.Errorf("record: index: %w", err)
		}
		if _, err := s.idx.Write(append(b, '\n')); err != nil {
			return fmt.Errorf("record: index: %w", err)
		}
	}
	return s.data(buf[prev:])
}

func (s *sink) data(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	var err error
	if s.gz != nil {
		_, err = s.gz.Write(b)
	} else {
		_, err = s.bw.Write(b)
	}
	if err != nil {
		return fmt.Errorf("record: write: %w", err)
	}
	return nil
}

// startMember ends the current gzip member, so the next one can be
// decompressed on its own from its offset. The first segment starts at 0.
func (s *sink) startMember() error {
	if s.gz == nil || s.cw.n+int64(s.bw.Buffered()) == 0 {
		return nil
	}
	if err := s.gz.Close(); err != nil {
		return fmt.Errorf("record: write: %w", err)
	}
	s.gz.Reset(s.bw)
	return nil
}

// flush makes everything written so far readable by another process.
func (s *sink) flush() error {
	if s.gz != nil {
		if err := s.gz.Flush(); err != nil {
			return fmt.Errorf("record: flush: %w", err)
		}
	}
	if err := s.bw.Flush(); err != nil {
		return fmt.Errorf("record: flush: %w", err)
	}
	return nil
}

// close ends the gzip stream and syncs both files: Close is where a
// recording becomes durable (per-second fsync would cost more than it
// saves; a process crash loses nothing the kernel already has).
func (s *sink) close() error {
	var errs []error
	if s.gz != nil {
		errs = append(errs, s.gz.Close())
	}
	errs = append(errs, s.bw.Flush(), s.f.Sync(), s.f.Close(), s.idx.Sync(), s.idx.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("record: close: %w", err)
	}
	return nil
}
