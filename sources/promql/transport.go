package promql

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
)

// newHTTPClient builds the client used for every API call from the shared
// httpclient settings: TLS, credentials for the configured origin only, the
// redirect limit, and a cap on response bodies (client_golang reads them
// unbounded). The query timeout comes from the caller's context.
func newHTTPClient(base *url.URL, h httpclient.Config, creds credentials) (*http.Client, error) {
	tlsCfg, err := h.TLSConfig(nil)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   10 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	var rt http.RoundTripper = &limitTransport{next: tr, max: h.MaxBodyBytes}
	rt = &authTransport{next: rt, origin: base, creds: creds}
	return &http.Client{Transport: rt, CheckRedirect: redirectPolicy(h.MaxRedirects)}, nil
}

// redirectPolicy follows at most max redirects; negative refuses all.
func redirectPolicy(max int) func(*http.Request, []*http.Request) error {
	return func(_ *http.Request, via []*http.Request) error {
		if max < 0 {
			return errors.New("redirects are not followed")
		}
		if len(via) > max {
			return fmt.Errorf("stopped after %d redirects", max)
		}
		return nil
	}
}

// limitTransport fails a response whose body exceeds max bytes.
type limitTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &limitedBody{rc: resp.Body, limit: t.max, left: t.max}
	return resp, nil
}

type limitedBody struct {
	rc    io.ReadCloser
	limit int64
	left  int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Probe for one more byte: a body of exactly max bytes is fine.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("response body larger than the %d-byte limit", b.limit)
		}
		return 0, err // io.EOF at the end; (0, nil) lets the caller retry
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
