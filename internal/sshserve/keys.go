package sshserve

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// maxKeysFile bounds how much of an authorized-keys file is read: the file
// is re-read while serving, so a runaway file must not eat memory.
const maxKeysFile = 1 << 20

// keySet is the parsed authorized-keys file, keyed by the wire form of
// each key (public keys are not secret: a map lookup is fine).
type keySet map[string]struct{}

// parseAuthorizedKeys reads an OpenSSH authorized_keys file. Lines whose
// options restrict the key in ways this server cannot enforce (from=,
// command=, expiry-time=, no-pty, cert-authority…) are skipped, so a key
// limited elsewhere is never granted more here; each skip is a warning.
func parseAuthorizedKeys(path string) (keySet, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("authorized keys: %w (put the public keys allowed to watch in it, one per line, or pass --authorized-keys FILE)", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeysFile+1))
	if err != nil {
		return nil, nil, fmt.Errorf("authorized keys %s: %w", path, err)
	}
	if len(data) > maxKeysFile {
		return nil, nil, fmt.Errorf("authorized keys %s: larger than %d bytes", path, maxKeysFile)
	}
	keys := keySet{}
	var warnings []string
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, _, opts, _, err := gossh.ParseAuthorizedKey(line)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s:%d: skipped: %v", path, n+1, err))
			continue
		}
		if why := unsupportedOption(opts); why != "" {
			warnings = append(warnings, fmt.Sprintf("%s:%d: skipped: option %s is not enforced by ttftop serve", path, n+1, why))
			continue
		}
		keys[string(key.Marshal())] = struct{}{}
	}
	if len(keys) == 0 {
		return nil, warnings, fmt.Errorf("authorized keys %s: no usable public key (add one per line, as in ~/.ssh/authorized_keys)", path)
	}
	return keys, warnings, nil
}

// unsupportedOption returns the first option that would need enforcement
// this server lacks, or "". The forwarding restrictions are accepted: this
// server forwards nothing anyway.
func unsupportedOption(opts []string) string {
	restrict, pty := false, false
	for _, o := range opts {
		name, _, _ := strings.Cut(strings.ToLower(o), "=")
		switch name {
		case "no-port-forwarding", "no-agent-forwarding", "no-x11-forwarding", "no-user-rc", "environment":
		case "restrict":
			restrict = true
		case "pty":
			pty = true
		default: // from, command, expiry-time, no-pty, cert-authority, principals, permitopen, …
			return name
		}
	}
	if restrict && !pty {
		return "restrict (without pty)"
	}
	return ""
}

// authorizer checks keys against the file, re-reading it when its size or
// modification time changes so removing a key revokes it without a
// restart. A file that becomes unreadable or empty denies everyone.
type authorizer struct {
	path string
	warn func(msg string)

	mu      sync.Mutex
	keys    keySet
	size    int64
	modTime time.Time
}

func newAuthorizer(path string, warn func(string)) (*authorizer, error) {
	a := &authorizer{path: path, warn: warn}
	if err := a.reload(); err != nil {
		return nil, err
	}
	return a, nil
}

// reload parses the file if it changed; the caller holds no lock.
func (a *authorizer) reload() error {
	st, err := os.Stat(a.path)
	if err != nil {
		return fmt.Errorf("authorized keys: %w (put the public keys allowed to watch in it, one per line, or pass --authorized-keys FILE)", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keys != nil && st.Size() == a.size && st.ModTime().Equal(a.modTime) {
		return nil
	}
	keys, warnings, err := parseAuthorizedKeys(a.path)
	for _, w := range warnings {
		a.warn(w)
	}
	a.size, a.modTime = st.Size(), st.ModTime()
	a.keys = keys // nil on error: deny everyone until the file is fixed
	return err
}

// allowed reports whether key may log in. Certificates are refused: their
// signer, principals and validity would need checking.
func (a *authorizer) allowed(key gossh.PublicKey) bool {
	if _, isCert := key.(*gossh.Certificate); isCert {
		return false
	}
	if err := a.reload(); err != nil {
		a.warn(err.Error())
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.keys[string(key.Marshal())]
	return ok
}

// loadHostKey reads the host key at path, or creates an ed25519 key there
// (0600, in a 0700 directory) so clients see the same host key on every
// start. Like sshd, it refuses a key file others can read.
func loadHostKey(path string) (gossh.Signer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createHostKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		data, err = os.ReadFile(path) // ErrExist: another process won the race
	}
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("host key: %w", err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("host key %s is accessible by others (mode %04o): chmod 600 it", path, perm)
	}
	signer, err := gossh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("host key %s: %w", path, err)
	}
	return signer, nil
}

// createHostKey writes a new ed25519 key with O_EXCL, so an existing key
// is never overwritten; a failed write leaves no partial file behind.
func createHostKey(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("host key directory: %w", err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("host key: %w", err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "ttftop host key")
	if err != nil {
		return fmt.Errorf("host key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("host key: %w", err)
	}
	_, werr := f.Write(pem.EncodeToMemory(block))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		if rerr := os.Remove(path); rerr != nil {
			return fmt.Errorf("host key: %w (and removing the partial file: %v)", werr, rerr)
		}
		return fmt.Errorf("host key: %w", werr)
	}
	return nil
}
