package probe

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

type frameWant struct {
	name, data          string
	comment, unterminal bool
}

func frames(t *testing.T, body string, ndjson bool) []frameWant {
	t.Helper()
	lr := newLineReader(strings.NewReader(body), time.Now(), 1024)
	var fr framer = &sseFramer{lr: lr}
	if ndjson {
		fr = &ndjsonFramer{lr: lr}
	}
	var out []frameWant
	for {
		f, err := fr.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, frameWant{string(f.name), string(f.data), f.comment, f.unterminated})
	}
}

func TestSSEFraming(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []frameWant
	}{
		{"LF", "data: a\n\ndata: b\n\n", []frameWant{{data: "a"}, {data: "b"}}},
		{"CRLF", "event: x\r\ndata: a\r\n\r\n", []frameWant{{name: "x", data: "a"}}},
		{"bare CR", "data: a\r\rdata: b\r\r", []frameWant{{data: "a"}, {data: "b"}}},
		{"no space after colon", "data:{\"a\":1}\n\n", []frameWant{{data: `{"a":1}`}}},
		{"only one space stripped", "data:  x\n\n", []frameWant{{data: " x"}}},
		{"multi-line data", "data: a\ndata: b\n\n", []frameWant{{data: "a\nb"}}},
		{"comments", ": ping\n\ndata: a\n: inside\n\n", []frameWant{{comment: true}, {data: "a"}}},
		{"event without data is dropped", "event: x\n\ndata: a\n\n", []frameWant{{data: "a"}}},
		{"id and retry ignored", "id: 1\nretry: 5\ndata: a\n\n", []frameWant{{data: "a"}}},
		{"unterminated at EOF", "data: a\n\nevent: stop\ndata: z", []frameWant{{data: "a"}, {name: "stop", data: "z", unterminal: true}}},
		{"trailing blank lines", "data: a\n\n\n\n", []frameWant{{data: "a"}}},
	}
	for _, c := range cases {
		got := frames(t, c.body, false)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: frame %d = %+v, want %+v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func TestNDJSONFraming(t *testing.T) {
	got := frames(t, "{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":3}", true)
	want := []frameWant{{data: `{"a":1}`}, {data: `{"b":2}`}, {data: `{"c":3}`, unterminal: true}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("got %+v", got)
	}
}

func TestLineCap(t *testing.T) {
	lr := newLineReader(strings.NewReader("data: "+strings.Repeat("x", 5000)+"\n\n"), time.Now(), 4096)
	_, _, err := lr.next()
	var tooLong errLineTooLong
	if !errors.As(err, &tooLong) {
		t.Errorf("err %v", err)
	}
	lr = newLineReader(strings.NewReader(strings.Repeat("x", 5000)+"\n"), time.Now(), 8192)
	if line, _, err := lr.next(); err != nil || len(line) != 5000 {
		t.Errorf("5000-byte line under an 8192 cap: %d %v", len(line), err)
	}
}

// slowReader returns one chunk per Read, sleeping before each.
type slowReader struct {
	chunks []string
	delay  time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.delay)
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	if s.chunks[0] == "" {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// TestStampsAtFirstByte: an event is stamped when its first byte was
// read, even when it shares a read with the previous event, and an
// event split over reads keeps the first read's time.
func TestStampsAtFirstByte(t *testing.T) {
	start := time.Now()
	sr := &slowReader{chunks: []string{"data: a\n\ndata: b\n\ndata: c", "c\n\n"}, delay: 30 * time.Millisecond}
	fr := &sseFramer{lr: newLineReader(sr, start, 1024)}
	var at []time.Duration
	for {
		f, err := fr.next()
		if err != nil {
			break
		}
		at = append(at, f.at)
	}
	if len(at) != 3 {
		t.Fatalf("stamps %v", at)
	}
	if at[1] != at[0] || at[2] != at[0] {
		t.Errorf("events of one read stamped %v, want one time (the read's)", at)
	}
}
