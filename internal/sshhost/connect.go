package sshhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options configure how a host is reached.
type Options struct {
	// Home is where ~/.ssh is (default $HOME).
	Home string
	// AcceptNew adds an unknown host's key to known_hosts, as ssh's
	// StrictHostKeyChecking=accept-new; a changed key is still refused.
	AcceptNew bool
	// Timeout bounds the TCP connection and the handshake (default 10 s).
	Timeout time.Duration
}

func (o Options) home() string {
	if o.Home != "" {
		return o.Home
	}
	h, _ := os.UserHomeDir() // "" when unknown: relative paths, which fail clearly
	return h
}

// connect opens one SSH connection as ssh would.
func connect(ctx context.Context, s Settings, o Options) (*ssh.Client, error) {
	auth, closeAgent := authMethods(s)
	defer closeAgent()
	if len(auth) == 0 {
		return nil, fmt.Errorf("no way to authenticate to %s: no agent (SSH_AUTH_SOCK) and no readable unencrypted key among %s", s.Addr(), strings.Join(s.IdentityFiles, ", "))
	}
	hostKey, err := hostKeyCallback(s, o.AcceptNew)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	cfg := &ssh.ClientConfig{User: s.User, Auth: auth, HostKeyCallback: hostKey, Timeout: timeout}
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl) // the handshake only; cleared below
	} else {
		_ = conn.SetDeadline(time.Now().Add(timeout))
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, s.Addr(), cfg)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		_ = c.Close()
		return nil, err
	}
	return ssh.NewClient(c, chans, reqs), nil
}

// authMethods are the agent's keys, then the identity files' (those that
// are readable and not passphrase-protected), as ssh tries them.
func authMethods(s Settings) ([]ssh.AuthMethod, func()) {
	var methods []ssh.AuthMethod
	closeAgent := func() {}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if conn, err := net.Dial("unix", sock); err == nil {
			methods = append(methods, ssh.PublicKeysCallback(agent.NewClient(conn).Signers))
			closeAgent = func() { _ = conn.Close() }
		}
	}
	var signers []ssh.Signer
	for _, f := range s.IdentityFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if k, err := ssh.ParsePrivateKey(b); err == nil {
			signers = append(signers, k)
		}
	}
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	return methods, closeAgent
}

// hostKeyCallback checks the server's key against the known_hosts files;
// an unknown key is refused unless acceptNew, then appended to the first
// file; a changed key is always refused.
func hostKeyCallback(s Settings, acceptNew bool) (ssh.HostKeyCallback, error) {
	var files []string
	for _, f := range s.KnownHosts {
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	check := func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	if len(files) > 0 {
		cb, err := knownhosts.New(files...)
		if err != nil {
			return nil, fmt.Errorf("known_hosts: %w", err)
		}
		check = cb
	}
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := check(hostname, remote, key)
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return err
		}
		fp := ssh.FingerprintSHA256(key)
		if len(ke.Want) > 0 {
			return fmt.Errorf("the host key of %s has CHANGED (now %s %s; known_hosts has another): refusing to connect; if the change is expected, remove its line from %s",
				hostname, key.Type(), fp, ke.Want[0].Filename)
		}
		if !acceptNew {
			return fmt.Errorf("the host key of %s is not known (%s %s): refusing to connect; check it and add it to %s (ssh %s once), or pass --ssh-accept-new",
				hostname, key.Type(), fp, s.KnownHosts[0], hostname)
		}
		return appendKnownHost(s.KnownHosts[0], hostname, key)
	}, nil
}

func appendKnownHost(file, hostname string, key ssh.PublicKey) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key)
	if _, err := fmt.Fprintln(f, line); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
