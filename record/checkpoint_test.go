package record

import (
	"bytes"
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
