package httpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Client performs GET requests with the configured auth, TLS and limits.
// It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
	// sizes remembers each URL's last body size, to read the next body
	// into one right-sized buffer (a scrape every second allocates less).
	sizes sync.Map // string → int
	// bufs recycles read buffers: a body costs one allocation, its string.
	bufs sync.Pool // *[]byte
}

// New builds a Client; it fails when the CA file cannot be used.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	tlsCfg, err := cfg.TLSConfig(nil)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	tr.MaxIdleConnsPerHost = 4
	tr.ResponseHeaderTimeout = cfg.Timeout
	if cfg.Dial != nil {
		tr.DialContext = cfg.Dial
		tr.Proxy = nil // the tunnel is the way there
	}
	var rt http.RoundTripper = tr
	if cfg.Transport != nil {
		if rt, err = cfg.Transport(tr); err != nil {
			return nil, err
		}
	}
	c := &Client{cfg: cfg}
	c.http = &http.Client{Transport: rt, Timeout: cfg.Timeout, CheckRedirect: c.checkRedirect}
	return c, nil
}

// Insecure reports whether TLS verification is disabled.
func (c *Client) Insecure() bool { return c.cfg.InsecureSkipVerify }

// CloseIdle closes idle keep-alive connections.
func (c *Client) CloseIdle() { c.http.CloseIdleConnections() }

// checkRedirect limits redirects and strips credentials when a redirect
// leaves the original host or downgrades to plain HTTP (Go itself keeps
// custom headers and forwards Authorization to subdomains).
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.cfg.MaxRedirects < 0 {
		return errors.New("redirects are not followed")
	}
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", c.cfg.MaxRedirects)
	}
	first := via[0].URL
	if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") {
		req.Header.Del("Authorization")
		for name := range c.cfg.Headers {
			req.Header.Del(name)
		}
	}
	return nil
}

// Response is a successful (2xx) response with its body read.
type Response struct {
	Status  int
	Header  http.Header
	Body    string
	Latency time.Duration
}

// Get fetches url with the given Accept header. Non-2xx statuses, bodies
// over the cap and transport failures are *Error values.
func (c *Client) Get(ctx context.Context, url, accept string) (*Response, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, newError(url, 0, err, "bad request URL")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	secrets, err := c.authorize(req)
	if err != nil {
		return nil, newError(url, 0, err, "credentials")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, scrub(newError(url, 0, err, "GET %s", Redact(url)), secrets)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, ErrorBodyBytes))
		msg := fmt.Sprintf("GET %s: HTTP %s", Redact(url), resp.Status)
		if s := strings.TrimSpace(string(snippet)); s != "" {
			msg += ": " + s
		}
		// Error bodies can echo request headers: scrub our secrets.
		return nil, scrub(newError(url, resp.StatusCode, nil, "%s", msg), secrets)
	}
	hint := int(resp.ContentLength)
	if v, ok := c.sizes.Load(url); ok && hint <= 0 {
		hint = v.(int)
	}
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	body, err := readCapped(resp.Body, c.cfg.MaxBodyBytes, hint, bp)
	c.bufs.Put(bp)
	if err != nil {
		return nil, newError(url, resp.StatusCode, err, "GET %s: reading body", Redact(url))
	}
	c.sizes.Store(url, len(body))
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Latency: time.Since(start)}, nil
}

// authorize adds the bearer token and custom headers, re-reading files,
// and returns the secret values sent.
func (c *Client) authorize(req *http.Request) ([]string, error) {
	var secrets []string
	if !c.cfg.BearerToken.IsZero() {
		tok, err := c.cfg.BearerToken.Fetch()
		if err != nil {
			return nil, fmt.Errorf("bearer token: %w", err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok.Reveal())
			secrets = append(secrets, tok.Reveal())
		}
	}
	for name, src := range c.cfg.Headers {
		v, err := src.Fetch()
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		req.Header.Set(name, v.Reveal())
		secrets = append(secrets, v.Reveal())
	}
	return secrets, nil
}

// scrub replaces every secret value in e's message by "<secret>".
func scrub(e *Error, secrets []string) *Error {
	e.Msg = Scrub(e.Msg, secrets)
	return e
}

// readCapped reads r fully unless it exceeds max bytes, into *bp (grown
// to about hint bytes and kept for reuse), and returns a copy.
func readCapped(r io.Reader, max int64, hint int, bp *[]byte) (string, error) {
	size := int64(hint) + int64(hint/8) + 512
	if hint <= 0 || size > max+1 {
		size = min(max+1, 64<<10)
	}
	buf := (*bp)[:0]
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	defer func() {
		if cap(buf) <= 4<<20 { // do not pin huge buffers
			*bp = buf[:0]
		}
	}()
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):cap(buf)]
		if int64(len(buf))+int64(len(room)) > max+1 {
			room = room[:max+1-int64(len(buf))]
		}
		n, err := r.Read(room)
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return "", fmt.Errorf("%w (%d MiB)", ErrBodyTooLarge, max>>20)
		}
		if err == io.EOF {
			return string(buf), nil
		}
		if err != nil {
			return "", err
		}
	}
}
