package sshhost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/internal/discover"
)

// listScript prints the host's TCP tables and every process's command
// line (arguments separated by \037, one process a line), first @@smi
// when nvidia-smi is installed: what local discovery reads of /proc and
// PATH, in one exec. Nothing is installed there.
const listScript = `command -v nvidia-smi >/dev/null && echo @@smi; cat /proc/net/tcp 2>/dev/null; echo @@tcp6; cat /proc/net/tcp6 2>/dev/null; echo @@procs
for d in /proc/[0-9]*; do printf '%s ' "${d#/proc/}"; tr '\000' '\037' < "$d/cmdline" 2>/dev/null; echo; done`

// ReadMachine reads the host's listening sockets and engine processes
// with two commands over the connection: the tables and command lines,
// then the open sockets of the engine processes only.
func (h *Host) ReadMachine(ctx context.Context) (discover.Machine, error) {
	out, err := h.run(ctx, listScript)
	if err != nil {
		return discover.Machine{}, err
	}
	m := parseListing(out)
	if len(m.Procs) == 0 {
		return m, nil
	}
	var script strings.Builder
	for _, p := range m.Procs {
		fmt.Fprintf(&script, "echo @@%d; readlink /proc/%d/fd/* 2>/dev/null; ", p.PID, p.PID)
	}
	script.WriteString("true") // an unreadable last process is no failure
	links, err := h.run(ctx, script.String())
	if err != nil {
		return m, err
	}
	sockets := parseSocketLinks(links)
	for i, p := range m.Procs {
		m.Procs[i].Sockets = sockets[p.PID] // nil: not readable (another user's)
	}
	return m, nil
}

// parseListing reads listScript's output.
func parseListing(b []byte) discover.Machine {
	var m discover.Machine
	b, m.NvidiaSMI = bytes.CutPrefix(b, []byte("@@smi\n"))
	tcp, rest, _ := bytes.Cut(b, []byte("@@tcp6\n"))
	tcp6, procs, _ := bytes.Cut(rest, []byte("@@procs\n"))
	for _, t := range [][]byte{tcp, tcp6} {
		if len(bytes.TrimSpace(t)) > 0 {
			m.ListenersRead = true
			m.Listeners = append(m.Listeners, discover.ParseProcNetTCP(t)...)
		}
	}
	for _, line := range strings.Split(string(procs), "\n") {
		pidText, cmd, ok := strings.Cut(line, " ")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil {
			continue
		}
		m.Processes++
		cmd = strings.TrimRight(cmd, "\037")
		if cmd == "" {
			continue // a kernel thread
		}
		if p, ok := discover.EngineProc(pid, strings.Split(cmd, "\037")); ok {
			m.Procs = append(m.Procs, p)
		}
	}
	return m
}

// parseSocketLinks reads "@@PID" headers each followed by fd links.
func parseSocketLinks(b []byte) map[int]map[uint64]bool {
	out := map[int]map[uint64]bool{}
	pid := -1
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "@@"); ok {
			pid, _ = strconv.Atoi(p)
			continue
		}
		if n, ok := discover.SocketInode(line); ok && pid >= 0 {
			if out[pid] == nil {
				out[pid] = map[uint64]bool{}
			}
			out[pid][n] = true
		}
	}
	return out
}

// run executes cmd on the host and returns its stdout.
func (h *Host) run(ctx context.Context, cmd string) ([]byte, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	s, err := c.NewSession()
	if err != nil {
		return nil, fmt.Errorf("ssh %s: %w", h.target.Alias, err)
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	defer stop()
	var out bytes.Buffer
	s.Stdout = &out
	if err := s.Run(cmd); err != nil {
		return nil, fmt.Errorf("ssh %s: reading /proc: %w", h.target.Alias, err)
	}
	return out.Bytes(), nil
}

// Start runs argv on the host (each argument quoted for its shell) and
// returns its stdout and a wait that ends the session; the error of a
// failed command carries its stderr. ctx's end closes the session.
func (h *Host) Start(ctx context.Context, argv []string) (io.Reader, func() error, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.NewSession()
	if err != nil {
		return nil, nil, fmt.Errorf("ssh %s: %w", h.target.Alias, err)
	}
	out, err := s.StdoutPipe()
	if err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	stderr := &headBuffer{max: 4096}
	s.Stderr = stderr
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	if err := s.Start(strings.Join(quoted, " ")); err != nil {
		stop()
		_ = s.Close()
		return nil, nil, fmt.Errorf("ssh %s: %w", h.target.Alias, err)
	}
	wait := func() error {
		defer stop()
		defer s.Close()
		if err := s.Wait(); err != nil {
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				return fmt.Errorf("on %s: %s", h.target.Alias, msg)
			}
			return fmt.Errorf("on %s: %w", h.target.Alias, err)
		}
		return nil
	}
	return out, wait, nil
}

// headBuffer keeps the first max bytes written (a command's stderr).
type headBuffer struct {
	bytes.Buffer
	max int
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
