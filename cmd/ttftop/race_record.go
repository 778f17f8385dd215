package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/tui/raceview"
)

// A race's recording (race --record FILE) is what the race view was sent,
// each message with the instant it was sent, so that `ttftop replay
// FILE` draws every chunk when it arrived — never sooner. JSON lines
// (gzip when the name ends in .gz):
//
//	{"format":"ttftop-race","version":1,"at":"…","title":"…","lanes":[{"Label":"A","Name":"…"}]}
//	{"at_ns":1200,"started":{"Round":1}}
//	{"at_ns":213000000,"chunk":{"Racer":0,"Text":"Once","Part":0,"At":…,"TTFT":…,"Tokens":1}}
//	{"at_ns":…,"finished":{…}}
//	{"at_ns":…,"ended":{"Round":1,"StartSkew":…,"Positions":[1,2]}}
//
// at_ns is the time since the recording began on the recorder's
// monotonic clock. The header comes first, so replay tells a race from a
// dashboard's recording by its first line.

const (
	raceFormatName    = "ttftop-race"
	raceFormatVersion = 1
)

// raceHeader is a race recording's first line.
type raceHeader struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	At      time.Time       `json:"at"`
	Title   string          `json:"title"`
	Lanes   []raceview.Lane `json:"lanes"`
}

// raceEvent is one message to the race view and when it was sent.
type raceEvent struct {
	At       time.Duration      `json:"at_ns"`
	Started  *raceview.Started  `json:"started,omitempty"`
	Chunk    *raceview.Chunk    `json:"chunk,omitempty"`
	Finished *raceview.Finished `json:"finished,omitempty"`
	Ended    *raceview.Ended    `json:"ended,omitempty"`
	Summary  *raceview.Summary  `json:"summary,omitempty"`
}

// msg is the event's message (nil for a line of an unknown kind).
func (e raceEvent) msg() tea.Msg {
	switch {
	case e.Started != nil:
		return *e.Started
	case e.Chunk != nil:
		return *e.Chunk
	case e.Finished != nil:
		return *e.Finished
	case e.Ended != nil:
		return *e.Ended
	case e.Summary != nil:
		return *e.Summary
	}
	return nil
}

// raceRecorder writes a race's recording. Record is safe for concurrent
// use (the racers' goroutines call it).
type raceRecorder struct {
	mu    sync.Mutex
	start time.Time // monotonic
	f     *os.File
	gz    *gzip.Writer
	w     *bufio.Writer
	enc   *json.Encoder
	err   error // the first write error, returned by Close
}

// newRaceRecorder creates path and writes the header.
func newRaceRecorder(path, title string, lanes []raceview.Lane) (*raceRecorder, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	r := &raceRecorder{start: time.Now(), f: f}
	var w io.Writer = f
	if strings.HasSuffix(path, ".gz") {
		r.gz = gzip.NewWriter(f)
		w = r.gz
	}
	r.w = bufio.NewWriter(w)
	r.enc = json.NewEncoder(r.w)
	r.err = r.enc.Encode(raceHeader{Format: raceFormatName, Version: raceFormatVersion, At: r.start.UTC(), Title: title, Lanes: lanes})
	if r.err == nil {
		r.err = r.flush() // a race recording from its first line
	}
	return r, nil
}

// Record keeps msg with the time since the recording began.
func (r *raceRecorder) Record(msg tea.Msg) {
	e := raceEvent{}
	switch m := msg.(type) {
	case raceview.Started:
		e.Started = &m
	case raceview.Chunk:
		e.Chunk = &m
	case raceview.Finished:
		e.Finished = &m
	case raceview.Ended:
		e.Ended = &m
	case raceview.Summary:
		e.Summary = &m
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e.At = time.Since(r.start)
	if r.err == nil {
		r.err = r.enc.Encode(e)
	}
	if r.err == nil && e.Ended != nil {
		r.err = r.flush() // a finished round is kept should the process be killed
	}
}

// flush writes what is buffered through to the file.
func (r *raceRecorder) flush() error {
	if err := r.w.Flush(); err != nil || r.gz == nil {
		return err
	}
	return r.gz.Flush()
}

// Close flushes and closes the file; the error is the first that kept
// something from being written.
func (r *raceRecorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := errors.Join(r.err, r.w.Flush())
	if r.gz != nil {
		err = errors.Join(err, r.gz.Close())
	}
	if err = errors.Join(err, r.f.Close()); err != nil {
		return fmt.Errorf("--record: %w", err)
	}
	return nil
}

// openRecording opens a recording, through gzip when its name ends in .gz.
func openRecording(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, nil
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", path, err), f.Close())
	}
	return readCloser{gz, func() error { return errors.Join(gz.Close(), f.Close()) }}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// readRaceRecording reads a race recording; ok is false when path is not
// one (another recording: the dashboard's), with no error.
func readRaceRecording(path string) (h raceHeader, events []raceEvent, ok bool, err error) {
	rc, err := openRecording(path)
	if err != nil {
		return h, nil, false, err
	}
	defer func() { err = errors.Join(err, rc.Close()) }()
	dec := json.NewDecoder(bufio.NewReader(rc))
	if dec.Decode(&h) != nil || h.Format != raceFormatName {
		return h, nil, false, nil
	}
	if h.Version > raceFormatVersion {
		return h, nil, true, fmt.Errorf("%s: race recording version %d; this build reads %d", path, h.Version, raceFormatVersion)
	}
	for {
		var e raceEvent
		if err := dec.Decode(&e); err == io.EOF {
			return h, events, true, nil
		} else if err != nil {
			// A cut recording (the racer killed): play what was kept.
			return h, events, true, fmt.Errorf("%s: cut after %d events: %w", path, len(events), err)
		}
		events = append(events, e)
	}
}

// playRace sends each event's message at its instant since the playback
// began, never sooner: the race at its true pace. It returns when every
// event is sent or ctx ends.
func playRace(ctx context.Context, events []raceEvent, send func(tea.Msg)) {
	start := time.Now()
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for _, e := range events {
		if wait := e.At - time.Since(start); wait > 0 {
			t.Reset(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
		if m := e.msg(); m != nil {
			send(m)
		}
	}
}

// replayRace draws a race recording in the race view at its true pace:
// each message when it was sent live, counted from the playback's start.
// q quits; there is no rematch (nothing to send a prompt to).
func replayRace(ctx context.Context, h raceHeader, events []raceEvent, cut error, stdout io.Writer) error {
	if !isTerminal(stdout) {
		return errors.Join(usagef("a race recording replays in a terminal (its lines are JSON: read them as they are)"), cut)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	view := raceview.New(raceview.Options{Lanes: h.Lanes, Rounds: 1,
		Title: "REPLAY of " + h.At.Format(time.RFC3339) + " " + h.Title})
	prog := tea.NewProgram(view, tea.WithContext(ctx), tea.WithOutput(stdout), tea.WithFPS(raceFPS))
	done := make(chan struct{})
	go func() {
		defer close(done)
		playRace(ctx, events, prog.Send)
	}()
	_, err := prog.Run()
	cancel()
	<-done
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	return errors.Join(err, cut)
}
