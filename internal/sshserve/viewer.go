package sshserve

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
)

// viewer is one SSH session's dashboard: its program, and the timers that
// end it (no input for IdleTimeout, MaxDuration reached, shutdown).
type viewer struct {
	s      *Server
	ctx    context.Context // cancelled when the session ends, or on a hard shutdown
	cancel context.CancelFunc
	start  time.Time
	// lastInput is the time (UnixNano) of the viewer's last keystroke,
	// mouse event or terminal reply.
	lastInput atomic.Int64

	mu  sync.Mutex
	p   *tea.Program
	why error
}

func newViewer(s *Server) *viewer {
	ctx, cancel := context.WithCancel(s.base)
	v := &viewer{s: s, ctx: ctx, cancel: cancel, start: time.Now()}
	v.lastInput.Store(v.start.UnixNano())
	return v
}

// program is wish's ProgramHandler: this session's model over the shared
// data, with the session's size, TERM and environment.
func (v *viewer) program(sess ssh.Session) *tea.Program {
	opts := v.s.opts.View
	opts.Getenv = sessionEnv(sess.Environ())
	opts.Viewers = v.s.Viewers // the READ-ONLY · n viewers badge
	p := tea.NewProgram(v.s.newModel(v.s.data, v.s.alerts, opts), v.s.programOptions(sess, v)...)
	v.mu.Lock()
	v.p = p
	stopped := v.why != nil
	v.mu.Unlock()
	if stopped {
		return nil // shutdown began before the program existed
	}
	go v.watch()
	return p
}

// stop ends the session for why (the first reason wins). Quit restores
// the viewer's terminal; it runs on its own goroutine because it blocks
// until the program takes it, and returns at the latest when close
// cancels the program's context.
func (v *viewer) stop(why error) {
	v.mu.Lock()
	if v.why == nil {
		v.why = why
	}
	p := v.p
	v.mu.Unlock()
	if p != nil {
		go p.Quit()
	}
}

func (v *viewer) cause() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.why
}

func (v *viewer) close() { v.cancel() }

// watch stops the session when it has had no input for IdleTimeout or
// has lasted MaxDuration. One timer, re-armed to the nearer deadline.
func (v *viewer) watch() {
	idle, maxd := v.s.opts.IdleTimeout, v.s.opts.MaxDuration
	if idle < 0 && maxd < 0 {
		return
	}
	t := time.NewTimer(v.until(time.Now(), idle, maxd))
	defer t.Stop()
	for {
		select {
		case <-v.ctx.Done():
			return
		case now := <-t.C:
			switch {
			case maxd > 0 && now.Sub(v.start) >= maxd:
				v.stop(fmt.Errorf("%w (%v)", errMaxTime, maxd))
				return
			case idle > 0 && now.Sub(time.Unix(0, v.lastInput.Load())) >= idle:
				v.stop(fmt.Errorf("%w for %v without input; disconnected", errIdle, idle))
				return
			}
			t.Reset(v.until(now, idle, maxd))
		}
	}
}

// until is the time left to the nearer of the two deadlines.
func (v *viewer) until(now time.Time, idle, maxd time.Duration) time.Duration {
	d := time.Duration(1<<63 - 1)
	if idle > 0 {
		d = min(d, time.Unix(0, v.lastInput.Load()).Add(idle).Sub(now))
	}
	if maxd > 0 {
		d = min(d, v.start.Add(maxd).Sub(now))
	}
	return max(d, time.Millisecond)
}

// activityReader notes when the viewer last sent anything.
type activityReader struct {
	r    io.Reader
	last *atomic.Int64
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.last.Store(time.Now().UnixNano())
	}
	return n, err
}
