package kubetest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/syncbuf"
)

// process is a started control-plane binary, stopped when the test ends.
type process struct {
	name    string
	cmd     *exec.Cmd
	log     *syncbuf.Buffer
	exited  chan struct{}
	waitErr error
}

func startProcess(t testing.TB, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{name: name, cmd: cmd, log: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("kubetest: starting %s: %v", name, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("kubetest: stopping %s: %v", name, err)
		}
	})
	return p
}

// stop sends SIGTERM, then SIGKILL after 10 s, and waits.
func (p *process) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
		return nil // an exit status after SIGTERM is the expected end
	case <-time.After(10 * time.Second):
		if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		<-p.exited
		return fmt.Errorf("%s ignored SIGTERM for 10s; killed", p.name)
	}
}

// failed says whether the process has exited, with its log.
func (p *process) failed() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v):\n%s", p.name, p.waitErr, p.log.String())
	default:
		return nil
	}
}

// freePorts reserves n loopback ports at once (each distinct), released
// for the binaries to take.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
