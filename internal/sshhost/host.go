package sshhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Backoff between reconnection attempts: doubling from minBackoff.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
	// keepaliveEvery finds a connection that died silently (a host that
	// went away without closing it).
	keepaliveEvery = 5 * time.Second
)

// Host is one SSH connection to a host, shared by every probe and
// scrape there, redialled with backoff when it drops. Safe for
// concurrent use.
type Host struct {
	target   Target
	settings Settings
	opts     Options

	dialMu sync.Mutex // one reconnection attempt at a time
	mu     sync.Mutex
	client *ssh.Client
	down   error // why the host is down; nil while connected
	since  time.Time
	retry  time.Time
	wait   time.Duration
}

// Open resolves t as ssh would and connects; the first connection's
// failure (an unknown host key, no way to authenticate) is returned.
func Open(ctx context.Context, t Target, o Options) (*Host, error) {
	s, err := Resolve(t, o.home())
	if err != nil {
		return nil, err
	}
	h := &Host{target: t, settings: s, opts: o}
	if _, err := h.conn(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", t, h.cause())
	}
	return h, nil
}

// Name is the host's name as given (the ssh alias).
func (h *Host) Name() string { return h.target.Alias }

// Target is the ssh:// target.
func (h *Host) Target() Target { return h.target }

// Close closes the connection.
func (h *Host) Close() error {
	h.mu.Lock()
	c := h.client
	h.client = nil
	h.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Close()
}

// Dial opens a connection from the host to addr (a direct-tcpip
// channel): probes and scrapes of the host's engines go through it.
func (h *Host) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := c.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("through ssh %s: %w", h.target.Alias, err)
	}
	return conn, nil
}

// Check reconnects when due and says whether the host is up; the error
// is why it is down, with when the next attempt is.
func (h *Host) Check(ctx context.Context) error {
	_, err := h.conn(ctx)
	return err
}

// conn is the live client, or a new one when the last dropped and its
// backoff has passed.
func (h *Host) conn(ctx context.Context) (*ssh.Client, error) {
	if c, err, ok := h.current(); ok {
		return c, err
	}
	h.dialMu.Lock()
	defer h.dialMu.Unlock()
	if c, err, ok := h.current(); ok {
		return c, err
	}
	c, err := connect(ctx, h.settings, h.opts)
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if err != nil {
		h.wait = min(max(2*h.wait, minBackoff), maxBackoff)
		h.retry = now.Add(h.wait)
		if h.down == nil {
			h.since = now
		}
		h.down = err
		return nil, h.downError(now)
	}
	h.client, h.down, h.wait = c, nil, 0
	go h.watch(c)
	return c, nil
}

// current is the client, or the down error while the backoff lasts;
// ok is false when a connection attempt is due.
func (h *Host) current() (*ssh.Client, error, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil {
		return h.client, nil, true
	}
	if now := time.Now(); h.down != nil && now.Before(h.retry) {
		return nil, h.downError(now), true
	}
	return nil, nil, false
}

func (h *Host) downError(now time.Time) error {
	return &DownError{Host: h.target.Alias, Cause: h.down, Since: h.since, Retry: h.retry.Sub(now)}
}

// cause is the last connection error.
func (h *Host) cause() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.down
}

// watch waits for c to end (closed by the server, the network, or a
// failed keepalive) and marks the host down.
func (h *Host) watch(c *ssh.Client) {
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t := time.NewTicker(keepaliveEvery)
	defer t.Stop()
	var why error
loop:
	for {
		select {
		case err := <-done:
			why = errors.New("connection closed")
			if err != nil {
				why = fmt.Errorf("connection lost: %w", err)
			}
			break loop
		case <-t.C:
			if err := keepalive(c); err != nil {
				why = fmt.Errorf("no answer to keepalive: %w", err)
				_ = c.Close()
				<-done
				break loop
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != c {
		return // closed by Close, or already replaced
	}
	now := time.Now()
	h.client, h.down, h.since = nil, why, now
	h.wait = minBackoff
	h.retry = now // the first reconnection may be tried at once
}

// keepalive asks the server for an answer within keepaliveEvery.
func keepalive(c *ssh.Client) error {
	res := make(chan error, 1)
	go func() {
		_, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
		res <- err
	}()
	select {
	case err := <-res:
		return err
	case <-time.After(keepaliveEvery):
		return errors.New("timed out")
	}
}

// DownError is a host that cannot be reached now.
type DownError struct {
	Host  string
	Cause error
	Since time.Time
	Retry time.Duration // until the next attempt
}

func (e *DownError) Error() string {
	return fmt.Sprintf("ssh host %s DOWN: %v (retrying in %s)", e.Host, e.Cause, e.Retry.Round(100*time.Millisecond))
}

func (e *DownError) Unwrap() error { return e.Cause }
