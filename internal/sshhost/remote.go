package sshhost

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tokentop/tokentop/internal/discover"
)

// listScript prints the host's TCP tables and every process's command
// line (arguments separated by \037, one process a line): what local
// discovery reads of /proc, in one exec. Nothing is installed there.
const listScript = `cat /proc/net/tcp 2>/dev/null; echo @@tcp6; cat /proc/net/tcp6 2>/dev/null; echo @@procs
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
