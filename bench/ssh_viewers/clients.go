//go:build unix

package main

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// counter counts what the viewers receive, so the figure shows they were
// fed frames the whole time.
type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// runClients holds n viewers (pty + shell, like `ssh -t`) until stdin
// closes, then prints what they received.
func runClients(n int, addr, keyFile string, cols, rows int) error {
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	signer, err := gossh.ParsePrivateKey(pem)
	if err != nil {
		return err
	}
	cfg := &gossh.ClientConfig{User: "bench", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: func(string, net.Addr, gossh.PublicKey) error { return nil }, Timeout: 30 * time.Second}
	var got atomic.Int64
	start := time.Now()
	var clients []*gossh.Client
	defer func() {
		for _, c := range clients {
			if err := c.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "ssh_viewers: client close:", err)
			}
		}
	}()
	for range n {
		c, err := gossh.Dial("tcp", addr, cfg)
		if err != nil {
			return err
		}
		clients = append(clients, c)
		sess, err := c.NewSession()
		if err != nil {
			return err
		}
		sess.Stdout, sess.Stderr = counter{&got}, counter{&got}
		if err := sess.RequestPty("xterm-256color", rows, cols, gossh.TerminalModes{}); err != nil {
			return err
		}
		if err := sess.Shell(); err != nil {
			return err
		}
	}
	if err := waitStdin(); err != nil {
		return err
	}
	fmt.Printf("bytes=%d seconds=%.3f\n", got.Load(), time.Since(start).Seconds())
	return nil
}
