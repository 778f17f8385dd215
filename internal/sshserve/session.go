package sshserve

import (
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	bm "charm.land/wish/v2/bubbletea"
	"github.com/charmbracelet/colorprofile"
	gossh "golang.org/x/crypto/ssh"

	"github.com/ttftop/ttftop/sanitize"
)

// Why a session ended, told to its viewer.
var (
	errIdle      = errors.New("idle")
	errMaxTime   = errors.New("session time limit reached")
	errShutdown  = errors.New("the server is shutting down")
	errTooMany   = errors.New("too many viewers")
	errNoPTY     = errors.New("ttftop needs a terminal: ssh -t")
	errNoCommand = errors.New("ttftop only shows its dashboard here: commands are not run (connect without one)")
)

// handle is the session handler: it refuses what ttftop does not offer,
// enforces the viewer cap, then runs one dashboard until it ends.
func (s *Server) handle(sess ssh.Session) {
	if !s.enter() {
		s.refuse(sess, errShutdown)
		return
	}
	defer s.handlers.Done()
	attrs := sessionAttrs(sess)
	switch {
	case sess.RawCommand() != "" || sess.Subsystem() != "":
		s.log.Info("ssh session refused: command", append(attrs, "command", clean(sess.RawCommand()))...)
		s.refuse(sess, errNoCommand)
		return
	case !hasPTY(sess):
		s.log.Info("ssh session refused: no pty", attrs...)
		s.refuse(sess, errNoPTY)
		return
	}
	v, n, ok := s.join()
	if !ok {
		s.log.Info("ssh session refused: too many viewers", append(attrs, "max", s.opts.MaxSessions)...)
		s.refuse(sess, fmt.Errorf("%w (%d are watching); try again later", errTooMany, s.opts.MaxSessions))
		return
	}
	start := time.Now()
	s.log.Info("ssh viewer connected", append(attrs, "viewers", n)...)
	defer func() {
		// Runs on a panic too, and contains it: the slot is always given
		// back, the session ends, and the other viewers never notice.
		left := s.leave(v)
		reason := "quit"
		if r := recover(); r != nil {
			reason = "panic: " + clean(fmt.Sprint(r))
		} else if cause := v.cause(); cause != nil {
			reason = cause.Error()
			s.tell(sess, cause)
		}
		s.log.Info("ssh viewer disconnected", append(attrs, "after", time.Since(start).Round(time.Second).String(), "reason", reason, "viewers", left)...)
	}()
	bm.MiddlewareWithProgramHandler(v.program)(func(ssh.Session) {})(sess)
}

// enter counts a handler, unless the server is closing.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

// join takes a viewer slot; it returns the viewer and how many now watch.
func (s *Server) join() (*viewer, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.viewers) >= s.opts.MaxSessions {
		return nil, len(s.viewers), false
	}
	v := newViewer(s)
	s.viewers[v] = struct{}{}
	return v, len(s.viewers), true
}

func (s *Server) leave(v *viewer) int {
	v.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.viewers, v)
	return len(s.viewers)
}

// refuse tells the client why and exits 1; the library's own exit after
// the handler returns is then a no-op.
func (s *Server) refuse(sess ssh.Session, why error) {
	s.tell(sess, why)
	if err := sess.Exit(1); err != nil {
		s.log.Debug("ssh exit", "err", err)
	}
}

// tell writes a one-line message to the client's stderr.
func (s *Server) tell(sess ssh.Session, why error) {
	msg := why.Error()
	if !strings.HasPrefix(msg, "ttftop") {
		msg = "ttftop: " + msg
	}
	if _, err := fmt.Fprintf(sess.Stderr(), "%s\r\n", msg); err != nil {
		s.log.Debug("ssh write", "err", err)
	}
}

func hasPTY(sess ssh.Session) bool {
	_, _, ok := sess.Pty()
	return ok
}

// sessionAttrs are the log fields of a session; user names and addresses
// come from the client, so they are sanitised before reaching a terminal.
func sessionAttrs(sess ssh.Session) []any {
	fp := "-"
	if k := sess.PublicKey(); k != nil {
		fp = gossh.FingerprintSHA256(k)
	}
	return []any{"user", clean(sess.User()), "key", fp, "remote", clean(sess.RemoteAddr().String())}
}

// clean makes client-controlled text safe for the server's log.
func clean(s string) string { return sanitize.Capped(s, 128) }

// sessionEnv is a Getenv over the session's environment (what the client
// sent with SendEnv), never the server's: NO_COLOR is the viewer's choice.
func sessionEnv(env []string) func(string) string {
	return func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
				return v
			}
		}
		return ""
	}
}

// programOptions are the session's tea options: wish's (input, output,
// size, and the colour profile from the session's TERM), then ours.
func (s *Server) programOptions(sess ssh.Session, v *viewer) []tea.ProgramOption {
	opts := append(bm.MakeOptions(sess),
		tea.WithContext(v.ctx),
		tea.WithFPS(s.opts.View.FPS),
		// The server owns signals: a viewer's program must not quit on the
		// server's SIGINT/SIGTERM by itself.
		tea.WithoutSignalHandler(),
		tea.WithInput(&activityReader{r: sess, last: &v.lastInput}),
	)
	if sessionEnv(sess.Environ())("NO_COLOR") != "" {
		// As tui.Run does: any non-empty NO_COLOR means no colour, where
		// colorprofile only honours values ParseBool accepts.
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	return opts
}
