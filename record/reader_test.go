package record

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// plainLines returns the decompressed lines of a recording.
func plainLines(t *testing.T, path string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return bytes.SplitAfter(raw, []byte{'\n'})
}

// isObservationLine tells the lines Next returns from a sequential read.
func isObservationLine(l []byte) bool {
	return !bytes.HasPrefix(l, []byte(`{"kind":"header"`)) && !bytes.HasPrefix(l, []byte(`{"kind":"checkpoint"`)) &&
		!bytes.HasPrefix(l, []byte(`{"state":true`)) && !bytes.HasPrefix(l, []byte(`{"kind":"alert"`)) &&
		!bytes.HasPrefix(l, []byte(`{"kind":"end"`))
}

// expectDamage checks a read of path stops after the observations of the
// lines before line with a DamageError naming line and offset.
func expectDamage(t *testing.T, path string, lines [][]byte, line int64, offset int64) {
	t.Helper()
	got, err := readAll(t, path)
	var d *DamageError
	if !errors.As(err, &d) {
		t.Fatalf("read ended with %v, want a DamageError", err)
	}
	want := 0
	for _, l := range lines[:line-1] {
		if isObservationLine(l) {
			want++
		}
	}
	if d.Line != line || d.Offset != offset || d.Replayed != int64(want) || len(got) != want {
		t.Fatalf("damage at line %d byte %d after %d (%d read), want line %d byte %d after %d: %v",
			d.Line, d.Offset, d.Replayed, len(got), line, offset, want, err)
	}
	upTo := `( up to \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)`
	if want == 0 {
		upTo += "?"
	}
	verb, tail := "damaged", ""
	if d.Unfinished() {
		verb, tail = "stops", ": everything before is intact, .+"
	}
	msg := fmt.Sprintf(`^recording %s at line %d \(byte %d\): .+; replayed %d observations%s%s$`, verb, line, offset, want, upTo, tail)
	if !regexp.MustCompile(msg).MatchString(err.Error()) {
		t.Errorf("message %q does not match %s", err, msg)
	}
}

func offsetOf(lines [][]byte, line int64) int64 {
	var n int64
	for _, l := range lines[:line-1] {
		n += int64(len(l))
	}
	return n
}

func TestTruncatedPlain(t *testing.T) {
	path := record(t, "cut.jsonl", mixed(300, time.Second))
	lines := plainLines(t, path)
	for _, line := range []int64{2, 57, 200} {
		// Cut in the middle of the line.
		cut := offsetOf(lines, line) + int64(len(lines[line-1])/2)
		p := filepath.Join(t.TempDir(), "cut.jsonl")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, raw[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		expectDamage(t, p, lines, line, offsetOf(lines, line))
		if _, err := readAll(t, p); !unfinished(err) {
			t.Errorf("a cut line is an unfinished recording, not damage: %v", err)
		}
	}
	// A last line complete but for its newline is not damage.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "nonl.jsonl")
	if err := os.WriteFile(p, raw[:len(raw)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, p); err != nil || len(got) != len(withoutLive(mixed(300, time.Second))) {
		t.Errorf("missing final newline: %d observations, %v", len(got), err)
	}
}

func TestGarbageLine(t *testing.T) {
	path := record(t, "g.jsonl", mixed(100, time.Second))
	lines := plainLines(t, path)
	const bad = 40
	var buf bytes.Buffer
	for i, l := range lines {
		if i == bad-1 {
			buf.WriteString("\x00\x01garbage}\n")
			continue
		}
		buf.Write(l)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	expectDamage(t, path, lines, bad, offsetOf(lines, bad))
	if _, err := readAll(t, path); unfinished(err) {
		t.Errorf("garbage is damage, not an unfinished recording: %v", err)
	}
}

func unfinished(err error) bool {
	var d *DamageError
	return errors.As(err, &d) && d.Unfinished()
}

func TestTruncatedGzip(t *testing.T) {
	path := record(t, "cut.jsonl.gz", mixed(3000, time.Second))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := plainLines(t, path)
	for _, frac := range []float64{0.3, 0.77} {
		cut := raw[:int(float64(len(raw))*frac)]
		// What survives is what a decompressor gets out of the cut file:
		// the damaged line is the first one it cannot finish.
		zr, err := gzip.NewReader(bytes.NewReader(cut))
		if err != nil {
			t.Fatal(err)
		}
		prefix, err := io.ReadAll(zr)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("decompressing the cut file: %v", err)
		}
		line := int64(bytes.Count(prefix, []byte{'\n'})) + 1
		p := filepath.Join(t.TempDir(), "cut.jsonl.gz")
		if err := os.WriteFile(p, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		expectDamage(t, p, lines, line, offsetOf(lines, line))
		_, err = readAll(t, p)
		if !strings.Contains(err.Error(), "unexpected EOF") || !unfinished(err) {
			t.Errorf("message %q lacks the cause, or calls a cut file damaged", err)
		}
	}
	// Garbage after a complete recording: everything, then damage.
	p := filepath.Join(t.TempDir(), "tail.jsonl.gz")
	if err := os.WriteFile(p, append(append([]byte(nil), raw...), "garbage"...), 0o644); err != nil {
		t.Fatal(err)
	}
	expectDamage(t, p, lines, int64(len(lines)), offsetOf(lines, int64(len(lines))))
}

func TestEmptyAndForeign(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, empty); err != nil || len(got) != 0 {
		t.Errorf("empty file: %d, %v", len(got), err)
	}
	future := filepath.Join(dir, "future.jsonl")
	if err := os.WriteFile(future, []byte(`{"kind":"header","format":"ttftop-recording","version":99}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, future); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("future version: %v", err)
	}
}
