package record

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// writeLines writes lines to a new plain recording and returns its path.
func writeLines(t *testing.T, lines [][]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "damaged.jsonl")
	if err := os.WriteFile(p, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkpointAfter returns the index of the first checkpoint line after
// index from.
func checkpointAfter(t *testing.T, lines [][]byte, from int) int {
	t.Helper()
	for i := from + 1; i < len(lines); i++ {
		if bytes.HasPrefix(lines[i], []byte(`{"kind":"checkpoint"`)) {
			return i
		}
	}
	t.Fatalf("no checkpoint after line %d", from+1)
	return 0
}

// Each checkpoint states its line number and the observations before it:
// a line lost in the middle of a segment (a bad copy, a hand edit) is
// caught at the next checkpoint as damage, not replayed as if whole.
func TestCheckpointCatchesAMissingLine(t *testing.T) {
	lines := plainLines(t, record(t, "cp.jsonl", mixed(300, time.Second)))
	first := checkpointAfter(t, lines, 2) // the first segment's checkpoint
	next := checkpointAfter(t, lines, first)
	drop := (first + next) / 2
	if !isObservationLine(lines[drop]) {
		t.Fatalf("line %d is not an observation: %s", drop+1, lines[drop])
	}
	damaged := append(append([][]byte{}, lines[:drop]...), lines[drop+1:]...)
	// The checkpoint moved up one line, to 1-based line next.
	expectDamage(t, writeLines(t, damaged), damaged, int64(next), offsetOf(damaged, int64(next)))
}

// A checkpoint whose own count is wrong is damage too.
func TestCheckpointWithAWrongCountIsDamage(t *testing.T) {
	lines := plainLines(t, record(t, "cp.jsonl", mixed(300, time.Second)))
	cp := checkpointAfter(t, lines, checkpointAfter(t, lines, 2))
	count := regexp.MustCompile(`"observations":\d+`)
	if !count.Match(lines[cp]) {
		t.Fatalf("checkpoint without a count: %s", lines[cp])
	}
	damaged := append([][]byte{}, lines...)
	damaged[cp] = count.ReplaceAll(lines[cp], []byte(`"observations":1`))
	expectDamage(t, writeLines(t, damaged), damaged, int64(cp+1), offsetOf(damaged, int64(cp+1)))
}

// readCursor reads every entry from a cursor to its end.
func readCursor(t *testing.T, c *cursor) []Entry {
	t.Helper()
	var out []Entry
	for e := c.peek(); e != nil; e = c.peek() {
		out = append(out, *e)
		c.take()
	}
	if !errors.Is(c.err, io.EOF) {
		t.Fatalf("cursor ended with %v", c.err)
	}
	return out
}

// A seek trusts the index only after the segment's first line proves it:
// the checkpoint there must carry the index entry's sequence, line and
// count. An index whose offsets land on real checkpoints of the wrong
// segments (a file rewritten in place with a segment fewer at its start)
// decodes cleanly there; it is detected, rebuilt, and the seek reads what a
// fresh index gives.
func TestSeekWithAStaleIndexReadsTheRightSegment(t *testing.T) {
	path := record(t, "a.jsonl", mixed(300, time.Second))
	fresh, err := scanIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh) < 4 {
		t.Fatalf("%d segments, want at least 4", len(fresh))
	}
	stale := append([]indexEntry{}, fresh...)
	for i := 1; i < len(stale)-1; i++ {
		stale[i].Offset, stale[i].DOffset = fresh[i+1].Offset, fresh[i+1].DOffset
	}
	from := fresh[2].At.Add(time.Second)
	if segmentFor(stale, from).Offset == segmentFor(fresh, from).Offset {
		t.Fatalf("the stale index agrees with the file at %v: the test proves nothing", from)
	}
	open := func(entries []indexEntry) []Entry {
		c, err := openCursor(path, &entries, from)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := c.close(); err != nil {
				t.Error(err)
			}
		}()
		return readCursor(t, c)
	}
	want, got := open(fresh), open(stale)
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("stale index read %d entries, a fresh one %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Line != want[i].Line || got[i].State != want[i].State || !sameObs(got[i].Observation, want[i].Observation) {
			t.Fatalf("entry %d: stale index gave line %d %+v, fresh gave line %d %+v", i, got[i].Line, got[i].Observation, want[i].Line, want[i].Observation)
		}
	}
}
