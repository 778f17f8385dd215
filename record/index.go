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
	"sort"
	"time"
)

// indexEntry locates one segment.
type indexEntry struct {
	Seq          int       `json:"seq"`
	At           time.Time `json:"at"`      // segment boundary (recording time)
	Offset       int64     `json:"offset"`  // file offset: a gzip member start in .gz files
	DOffset      int64     `json:"doffset"` // decompressed offset of its first line
	Line         int64     `json:"line"`    // number of its first line
	Observations int64     `json:"observations"`
}

func indexPath(path string) string { return path + ".idx" }

// loadIndex returns the recording's segments, from FILE.idx, or by
// scanning the file when the index is missing or unreadable (a copied
// recording, an older ttftop): slower, never wrong. Entries beyond the
// file's end (a crash after the index was written) are dropped.
func loadIndex(path string) ([]indexEntry, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	entries, err := readIndexFile(indexPath(path), fi.Size())
	if err == nil && len(entries) > 0 {
		return entries, nil
	}
	return scanIndex(path)
}

func readIndexFile(path string, size int64) ([]indexEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []indexEntry
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		if len(l) == 0 {
			continue
		}
		var e indexEntry
		if err := json.Unmarshal(l, &e); err != nil {
			break // a torn last line: keep what came before
		}
		if e.Offset >= size || (len(out) > 0 && (e.Offset <= out[len(out)-1].Offset || e.Line <= out[len(out)-1].Line)) {
			break
		}
		out = append(out, e)
	}
	if len(out) == 0 || out[0].Offset != 0 {
		return nil, errors.New("record: empty index")
	}
	return out, nil
}

// byteCounter counts what the decompressor consumed. It is an
// io.ByteReader, so flate reads through it without buffering ahead and the
// count is exactly where a gzip member ends.
type byteCounter struct {
	r *bufio.Reader
	n int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *byteCounter) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// scanIndex finds the segments by reading the whole file: each gzip
// member (or, in plain files, each checkpoint line) starts one. It stops
// quietly at damage: the reader reports it when it gets there.
func scanIndex(path string) ([]indexEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer f.Close() // read-only: a close error loses nothing
	br := bufio.NewReaderSize(f, 256<<10)
	magic, err := br.Peek(2)
	if err != nil {
		return []indexEntry{{}}, nil // empty or tiny: one segment at 0
	}
	if magic[0] == 0x1f && magic[1] == 0x8b {
		return scanGzipIndex(br), nil
	}
	return scanPlainIndex(br), nil
}

func scanPlainIndex(br *bufio.Reader) []indexEntry {
	out := []indexEntry{{}}
	var off, lineNo int64
	for {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line is never a checkpoint: skip the rest of it.
			n := int64(len(b))
			for err == bufio.ErrBufferFull {
				b, err = br.ReadSlice('\n')
				n += int64(len(b))
			}
			off += n
			lineNo++
			if err != nil {
				return out
			}
			continue
		}
		if err != nil {
			return out
		}
		lineNo++
		if bytes.HasPrefix(b, []byte(`{"kind":"checkpoint"`)) {
			if e, ok := checkpointEntry(b, off, off, lineNo); ok && e.Seq > 0 {
				out = append(out, e)
			}
		}
		off += int64(len(b))
	}
}

func scanGzipIndex(br *bufio.Reader) []indexEntry {
	out := []indexEntry{{}}
	c := &byteCounter{r: br}
	var zr gzip.Reader
	var doff, lineNo int64
	for first := true; ; first = false {
		start := c.n
		if err := zr.Reset(c); err != nil {
			return out
		}
		zr.Multistream(false)
		lr := bufio.NewReader(&zr)
		head, err := lr.ReadSlice('\n')
		if !first && err == nil {
			if e, ok := checkpointEntry(head, start, doff, lineNo+1); ok {
				out = append(out, e)
			}
		}
		lines, n, err := countLines(lr, head)
		lineNo += lines
		doff += n
		if err != nil {
			return out
		}
	}
}

// countLines counts the lines and bytes left in a member (head already
// read from it).
func countLines(r *bufio.Reader, head []byte) (lines, n int64, err error) {
	n = int64(len(head))
	if len(head) > 0 && head[len(head)-1] == '\n' {
		lines++
	}
	buf := make([]byte, 64<<10)
	for {
		k, err := r.Read(buf)
		n += int64(k)
		lines += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return lines, n, nil
		}
		if err != nil {
			return lines, n, err
		}
	}
}

func checkpointEntry(b []byte, off, doff, lineNo int64) (indexEntry, bool) {
	var l line
	var in interner
	if decodeLine(bytes.TrimRight(b, "\n"), &l, &in) != nil || l.Kind != kindCheckpoint || l.LineNo != lineNo {
		return indexEntry{}, false
	}
	return indexEntry{Seq: l.Seq, At: l.At, Offset: off, DOffset: doff, Line: lineNo, Observations: l.Observations}, true
}

// segmentFor returns the last segment starting at or before t (the first
// one if t is earlier than all).
func segmentFor(entries []indexEntry, t time.Time) indexEntry {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].At.After(t) })
	if i == 0 {
		return entries[0]
	}
	return entries[i-1]
}
