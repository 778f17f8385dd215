package discover

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ttftop/ttftop/engines"
)

// Proc is a process whose command line names an engine.
type Proc struct {
	PID  int
	Argv []string
	Spec engines.Process
	// Sockets are the socket inodes among its open files; nil when they
	// could not be read (another user's process, without root).
	Sockets map[uint64]bool
}

// Machine is what discovery reads of a host before it sends anything:
// its listening sockets and its engine processes.
type Machine struct {
	Listeners []Listener
	// ListenersRead is false when /proc/net/tcp could not be read: every
	// candidate port is then tried.
	ListenersRead bool
	Procs         []Proc
	// Processes counts the processes looked at.
	Processes int
	// NvidiaSMI: nvidia-smi is installed (read over SSH; Local asks
	// its LookPath).
	NvidiaSMI bool
}

// ReadMachine reads the listening sockets and engine processes under
// procRoot (normally /proc).
func ReadMachine(procRoot string) (Machine, error) {
	var m Machine
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(procRoot, name))
		if err != nil {
			continue // no IPv6, or no /proc: the other table, or the port list alone
		}
		m.ListenersRead = true
		m.Listeners = append(m.Listeners, ParseProcNetTCP(b)...)
	}
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		if m.ListenersRead {
			return m, nil
		}
		return m, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		m.Processes++
		b, err := os.ReadFile(filepath.Join(procRoot, e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue // gone, or a kernel thread
		}
		p, ok := EngineProc(pid, strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"))
		if !ok {
			continue
		}
		p.Sockets = socketInodes(filepath.Join(procRoot, e.Name(), "fd"))
		m.Procs = append(m.Procs, p)
	}
	return m, nil
}

// EngineProc is the process pid when its command line starts an engine.
func EngineProc(pid int, argv []string) (Proc, bool) {
	spec, ok := engines.ProcessOf(argv)
	return Proc{PID: pid, Argv: argv, Spec: spec}, ok
}

// SocketInode reads a socket's inode from its fd link ("socket:[12345]").
func SocketInode(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(strings.TrimSpace(link), "socket:[")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return n, err == nil
}

// socketInodes reads the inodes of the sockets among a process's open
// files ("socket:[12345]"); nil when its fd directory is not readable.
func socketInodes(fdDir string) map[uint64]bool {
	entries, err := os.ReadDir(fdDir)
	if err != nil {
		return nil
	}
	out := map[uint64]bool{}
	for _, e := range entries {
		link, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return nil
			}
			continue // closed meanwhile
		}
		if n, ok := SocketInode(link); ok {
			out[n] = true
		}
	}
	return out
}
