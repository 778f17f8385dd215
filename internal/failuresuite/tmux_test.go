//go:build integration

package failuresuite

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Terminal size of every screen scenario: what the issue was tried at.
const (
	screenWidth  = 160
	screenHeight = 50
)

// capture is one screenful with when it was read.
type capture struct {
	at   time.Time
	text string
}

// terminal is a program running in its own tmux server (a private socket),
// as a user would see it.
type terminal struct {
	t       *testing.T
	tmux    string
	sock    string
	session string
	pid     int // the program's pid (tmux's pane_pid)
	// serverPID is the tmux server's: it is not the test's child, so its
	// end is watched in /proc.
	serverPID int
	mu        sync.Mutex
	shots     []capture
}

// startTerminal runs argv (the ttftop binary first) in a new detached
// tmux session of screenWidth×screenHeight with a 256-colour TERM.
func startTerminal(t *testing.T, argv ...string) *terminal {
	t.Helper()
	tmux := requireBinary(t, "apt-get install tmux", "tmux")
	// A short private directory: the socket path must fit in sun_path.
	dir, err := os.MkdirTemp("", "ttfs")
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, tmux: tmux, sock: filepath.Join(dir, "s"), session: "fs"}
	home := t.TempDir()
	cmd := append([]string{"env", "TERM=xterm-256color", "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}, argv...)
	if out, err := term.run(append([]string{"new-session", "-d", "-s", term.session, "-x", strconv.Itoa(screenWidth),
		"-y", strconv.Itoa(screenHeight)}, cmd...)...); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() {
		term.stop()
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	out, err := term.run("display-message", "-p", "-t", term.session, "#{pane_pid} #{pid}")
	if err != nil {
		t.Fatalf("tmux display-message: %v: %s", err, out)
	}
	if _, err := fmt.Sscan(out, &term.pid, &term.serverPID); err != nil {
		t.Fatalf("tmux pane_pid and pid %q: %v", out, err)
	}
	return term
}

// run is one tmux command on the private server; -f /dev/null keeps the
// user's tmux.conf out.
func (s *terminal) run(args ...string) (string, error) {
	cmd := exec.Command(s.tmux, append([]string{"-f", "/dev/null", "-S", s.sock}, args...)...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.String(), err
}

// screen reads the screen as text and keeps it for later checks.
func (s *terminal) screen() (string, error) {
	out, err := s.run("capture-pane", "-p", "-t", s.session)
	if err != nil {
		return "", fmt.Errorf("capture-pane: %v: %s", err, out)
	}
	s.mu.Lock()
	s.shots = append(s.shots, capture{at: time.Now(), text: out})
	s.mu.Unlock()
	return out, nil
}

// captures returns every screen read in [from, to].
func (s *terminal) captures(from, to time.Time) []capture {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []capture
	for _, c := range s.shots {
		if !c.at.Before(from) && !c.at.After(to) {
			out = append(out, c)
		}
	}
	return out
}

// waitScreen polls the screen (every 500 ms: capturing costs the shared
// CPUs) until ok accepts it; it returns the screen and whether it did.
func (s *terminal) waitScreen(limit time.Duration, ok func(string) bool) (string, bool) {
	var last string
	_, found := eventually(limit, 500*time.Millisecond, func() bool {
		scr, err := s.screen()
		if err != nil {
			last = err.Error()
			return !s.alive()
		}
		last = scr
		return ok(scr) || !s.alive()
	})
	return last, found && ok(last)
}

// mustWaitScreen is waitScreen that fails the test with the last screen.
func (s *terminal) mustWaitScreen(limit time.Duration, what string, ok func(string) bool) string {
	s.t.Helper()
	scr, found := s.waitScreen(limit, ok)
	if !found {
		s.t.Fatalf("the screen never showed %s within %s; last screen:\n%s", what, limit, scr)
	}
	return scr
}

// alive reports whether the program still runs: no process, or a zombie
// no one reaped yet, is gone.
func (s *terminal) alive() bool { return processAlive(s.pid) }

func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// stop ends the program with SIGTERM (as a shutdown would), waits for it,
// kills it after 10 s, then ends the tmux server.
func (s *terminal) stop() {
	if s.pid > 0 && s.alive() {
		if err := syscall.Kill(s.pid, syscall.SIGTERM); err != nil && err != syscall.ESRCH {
			s.t.Errorf("SIGTERM to the program in tmux: %v", err)
		}
		if _, ok := eventually(10*time.Second, 100*time.Millisecond, func() bool { return !s.alive() }); !ok {
			s.t.Errorf("the program in tmux ignored SIGTERM for 10 s; killing it")
			if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
				s.t.Errorf("SIGKILL to the program in tmux: %v", err)
			}
			if _, ok := eventually(5*time.Second, 100*time.Millisecond, func() bool { return !s.alive() }); !ok {
				s.t.Errorf("the program in tmux (pid %d) survived SIGKILL", s.pid)
			}
		}
	}
	if s.t.Failed() {
		s.mu.Lock()
		if n := len(s.shots); n > 0 {
			s.t.Logf("last screen:\n%s", s.shots[n-1].text)
		}
		s.mu.Unlock()
	}
	// The session may be gone with its program: then there is no server,
	// or it is exiting as kill-server reaches it.
	if out, err := s.run("kill-server"); err != nil && !strings.Contains(out, "no server running") &&
		!strings.Contains(out, "error connecting") && !strings.Contains(out, "No such file") &&
		!strings.Contains(out, "server exited unexpectedly") {
		s.t.Errorf("tmux kill-server: %v: %s", err, out)
	}
	if s.serverPID > 0 {
		if _, ok := eventually(10*time.Second, 100*time.Millisecond, func() bool { return !processAlive(s.serverPID) }); !ok {
			s.t.Errorf("the tmux server (pid %d) still runs 10 s after kill-server", s.serverPID)
		}
	}
}

// headerOf is the screen's header: its first two lines (app line and
// sources line).
func headerOf(screen string) string {
	lines := strings.SplitN(screen, "\n", 3)
	if len(lines) > 2 {
		lines = lines[:2]
	}
	return strings.Join(lines, "\n")
}

// names reports whether a screen line names the endpoint: in full, or as
// a column cut in the middle keeps it (its start and its model, the
// distinguishing tail).
func names(ln, endpoint string) bool {
	if strings.Contains(ln, endpoint) {
		return true
	}
	i := strings.LastIndexByte(endpoint, '/')
	return i > 6 && strings.Contains(ln, endpoint[:6]) && strings.Contains(ln, endpoint[i:])
}

// alertLine finds an alerts-pane line of the given state word (FIRING,
// RESOLVED...) naming the endpoint and an objective accepted by objective.
func alertLine(screen, state, endpoint string, objective func(string) bool) (string, bool) {
	for _, ln := range strings.Split(screen, "\n") {
		s := strings.TrimLeft(ln, " ▸>")
		if !strings.HasPrefix(s, state+" ") || !names(s, endpoint) {
			continue
		}
		for _, f := range strings.Fields(s) {
			if objective(f) {
				return ln, true
			}
		}
	}
	return "", false
}

// availabilityName accepts the availability objective's name as the
// alerts pane shows it (possibly cut).
func availabilityName(field string) bool {
	return strings.HasPrefix(strings.ToLower(field), "availab")
}

// tpotName accepts the TPOT objective's derived name ("tpot-p95").
func tpotName(field string) bool { return strings.HasPrefix(field, "tpot") }

// firingCount is the "N FIRING" of the header, 0 when it shows none.
var firingCount = regexp.MustCompile(`(\d+) FIRING`)

func headerFiring(screen string) int {
	m := firingCount.FindStringSubmatch(headerOf(screen))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

// tableRow is the main table's row of an endpoint: the first line below
// the column titles that names it.
func tableRow(screen, endpoint string) (string, bool) {
	lines := strings.Split(screen, "\n")
	for i, ln := range lines {
		if !strings.Contains(ln, "ENDPOINT") {
			continue
		}
		for _, row := range lines[i+1:] {
			if names(row, endpoint) {
				return row, true
			}
		}
		return "", false
	}
	return "", false
}

// latencyPair matches a p50/p99 latency pair as the table prints it
// ("19.1ms/21.3ms", "1.2s/3.4s"); an age such as "ERROR 12s" is no pair.
var latencyPair = regexp.MustCompile(`\d(\.\d+)?(µs|ms|s)?/\d+(\.\d+)?(µs|ms|s)`)
