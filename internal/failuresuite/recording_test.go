//go:build integration

package failuresuite

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"time"
)

// recordedLine is what the suite reads of one recording line (JSON
// lines, `ttftop --record`): its kind and time, and a probe's summary.
type recordedLine struct {
	Kind     string         `json:"kind"`
	At       time.Time      `json:"at"`
	Endpoint string         `json:"endpoint"`
	Probe    *recordedProbe `json:"probe"`
	// State marks a repeat of an earlier observation (a segment's
	// preamble): not new data.
	State bool `json:"state"`
}

// observed reports whether the line is something that happened then (an
// observation or an alert transition), not bookkeeping (the header,
// index checkpoints, settings, preamble repeats).
func (l recordedLine) observed() bool {
	switch l.Kind {
	case "header", "checkpoint", "settings", "end", "":
		return false
	}
	return !l.State && !l.At.IsZero()
}

type recordedProbe struct {
	OK        bool    `json:"ok"`
	ErrorKind string  `json:"error_kind"`
	Error     string  `json:"error"`
	TPOTms    float64 `json:"tpot_ms"`
}

// recordingRead is a recording read independently of ttftop's reader:
// every complete line, and how the file ended.
type recordingRead struct {
	lines []recordedLine
	// complete is true when the file ends where it should: a gzip stream
	// with its trailer, or a plain file ending in a newline.
	complete bool
	// endErr is why reading stopped early (a cut gzip stream, a torn
	// line), nil when complete.
	endErr error
}

// readRecording reads path (gzip when it ends in .gz) as far as it can.
// A file still being written, or cut by a crash, reads up to its last
// complete line.
func readRecording(path string) (recordingRead, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return recordingRead{}, err
	}
	var data []byte
	var streamErr error
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return recordingRead{endErr: err}, nil
		}
		// io.ReadAll keeps what was decompressed before an error.
		data, streamErr = io.ReadAll(zr)
		if cerr := zr.Close(); streamErr == nil {
			streamErr = cerr
		}
	} else {
		data = raw
	}
	var out recordingRead
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	consumed := 0
	for sc.Scan() {
		b := sc.Bytes()
		if consumed+len(b)+1 > len(data) {
			break // the last line has no newline yet: torn
		}
		consumed += len(b) + 1
		var l recordedLine
		if err := json.Unmarshal(b, &l); err != nil {
			out.endErr = err
			return out, nil
		}
		out.lines = append(out.lines, l)
	}
	if err := sc.Err(); err != nil {
		out.endErr = err
		return out, nil
	}
	switch {
	case streamErr != nil:
		out.endErr = streamErr
	case consumed != len(data):
		out.endErr = errors.New("the last line is incomplete")
	default:
		out.complete = true
	}
	return out, nil
}

// span is the time of the first and the last observation.
func (r recordingRead) span() (first, last time.Time) {
	for _, l := range r.lines {
		if !l.observed() {
			continue
		}
		if first.IsZero() || l.At.Before(first) {
			first = l.At
		}
		if l.At.After(last) {
			last = l.At
		}
	}
	return first, last
}

// probes lists the probe records of one endpoint.
func (r recordingRead) probes(endpoint string) []recordedProbe {
	var out []recordedProbe
	for _, l := range r.lines {
		if l.Kind == "probe" && l.Probe != nil && l.Endpoint == endpoint && !l.State {
			out = append(out, *l.Probe)
		}
	}
	return out
}
