// Package enginetest starts real processes named like engines for
// discovery's tests: the test binary doubles as the server, copied to an
// engine's name ("vllm") and started with that engine's flags, serving
// the simulator (Sim) or a plain non-LLM HTTP server (Plain), so /proc
// shows a real process of that name. A test package that uses it calls
// ChildMain first thing in its TestMain.
package enginetest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/sim"
)

// Environment of a started engine process.
const (
	childMode = "TTFTOP_DISCOVER_CHILD"
	childAddr = "TTFTOP_DISCOVER_ADDR"
	childLog  = "TTFTOP_DISCOVER_LOG"
)

// Modes of a started engine process.
const (
	Sim   = "sim"   // the simulator: an OpenAI-compatible server with vLLM /metrics
	Plain = "plain" // 404 to everything, each request logged
)

// ChildMain serves and never returns when this process was started as
// an engine; otherwise it returns at once.
func ChildMain() {
	switch os.Getenv(childMode) {
	case Sim:
		os.Exit(serveSim(os.Getenv(childAddr)))
	case Plain:
		os.Exit(servePlain(os.Getenv(childAddr), os.Getenv(childLog)))
	}
}

func serveSim(addr string) int {
	s, err := sim.New(sim.Config{Listen: addr})
	if err == nil {
		err = s.Start(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {} // until killed
}

// servePlain answers 404 to everything and logs each request's method
// and path to logPath.
func servePlain(addr, logPath string) int {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	err = http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fmt.Fprintf(f, "%s %s\n", r.Method, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// Engine is a started copy of the test binary under an engine's name.
type Engine struct {
	PID  int
	Port int
	log  string
}

// Start runs the test binary as name with args, serving mode on a
// free loopback port, and waits until it accepts connections.
func Start(t *testing.T, name, mode string, port int, args ...string) Engine {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, name)
	copyFile(t, self, bin)
	c := Engine{Port: port, log: filepath.Join(dir, "requests.log")}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), childMode+"="+mode, childAddr+"=127.0.0.1:"+strconv.Itoa(port), childLog+"="+c.log)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.PID = cmd.Process.Pid
	t.Cleanup(func() {
		if err := cmd.Process.Kill(); err != nil {
			t.Errorf("kill %s: %v", name, err)
		}
		_ = cmd.Wait() // killed: its error is the signal
	})
	WaitListening(t, port)
	return c
}

// Requests is what a Plain engine was sent, one "METHOD /path" a line.
func (c Engine) Requests(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(c.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// FreePort is a loopback port free a moment ago.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// WaitListening polls until port accepts a connection (a child starting
// up on a loaded machine can take seconds).
func WaitListening(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on :%d: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}
