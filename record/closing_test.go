package record

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// TestCutOnLineBoundary: a recording whose writer was killed between two
// lines has no half line to show it; the missing closing line does, read
// from the start (Open) or from its last segment (Bounds, via the index).
func TestCutOnLineBoundary(t *testing.T) {
	obs := withoutLive(mixed(300, time.Second))
	path := record(t, "cut.jsonl", obs)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, path); err != nil {
		t.Fatalf("closed recording: %v", err)
	}
	if e := playerEnding(t, path); e != nil {
		t.Fatalf("player of the closed recording says it ends with %v", e)
	}
	lines := bytes.SplitAfter(raw, []byte{'\n'})
	last := lines[len(lines)-2] // SplitAfter leaves an empty tail
	if !bytes.HasPrefix(last, []byte(`{"kind":"end"`)) {
		t.Fatalf("last line %q is not the closing line", last)
	}
	if err := os.WriteFile(path, raw[:len(raw)-len(last)], 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, path)
	checkSame(t, got, obs)
	var d *DamageError
	if !errors.As(err, &d) || !d.Unfinished() || d.Replayed != int64(len(obs)) || d.Line != int64(len(lines)-1) {
		t.Fatalf("read of a recording cut before its closing line ended with %v", err)
	}
	wantAt := obs[len(obs)-1].At.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	want := "recording ends at " + wantAt + " without its closing record (the recorder was killed or crashed); replayed " +
		strconv.Itoa(len(obs)) + " observations up to there"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if e := playerEnding(t, path); e == nil || !errors.Is(e, errNoClosingRecord) {
		t.Errorf("player of the cut recording: Ending() = %v", e)
	}
	first, lastAt, berr := Bounds(path)
	if !errors.As(berr, &d) || !d.Unfinished() || !lastAt.Equal(obs[len(obs)-1].At) || first.IsZero() {
		t.Errorf("Bounds of the cut recording: %v .. %v, %v", first, lastAt, berr)
	}
}

// TestVersion2WithoutClosingLine: recordings from before version 3 have
// no closing line; they are not called cut for it.
func TestVersion2WithoutClosingLine(t *testing.T) {
	obs := withoutLive(mixed(100, time.Second))
	path := record(t, "v2.jsonl", obs)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v3 := []byte(`"format":"ttftop-recording","version":3}`)
	if !bytes.Contains(raw, v3) {
		t.Fatalf("header is not version 3: %.120s", raw)
	}
	raw = bytes.Replace(raw, v3, []byte(`"format":"ttftop-recording","version":2}`), 1)
	raw = raw[:bytes.LastIndex(raw, []byte(`{"kind":"end"`))]
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, path)
	if err != nil {
		t.Fatalf("version-2 recording: %v", err)
	}
	checkSame(t, got, obs)
	if _, _, err := Bounds(path); err != nil {
		t.Errorf("Bounds of the version-2 recording: %v", err)
	}
}

func playerEnding(t *testing.T, path string) *DamageError {
	t.Helper()
	p, err := NewPlayer(path, PlayerOptions{NewSink: func() telemetry.Sink { return &countSink{} }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	return p.Ending()
}
