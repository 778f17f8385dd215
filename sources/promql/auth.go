package promql

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ttftop/ttftop/sources/httpclient"
)

// BasicAuth is HTTP basic auth, which the shared httpclient.Config lacks.
// The password comes from an environment variable or a file (re-read on
// every request), never from a flag.
type BasicAuth struct {
	User     string                  `json:"user,omitempty" yaml:"user,omitempty"`
	Password httpclient.SecretSource `json:"password,omitzero" yaml:"password,omitempty"`
}

// validateAuth checks the credentials of a config.
func validateAuth(h httpclient.Config, b BasicAuth) error {
	if !h.BearerToken.IsZero() && (b.User != "" || !b.Password.IsZero()) {
		return errors.New("set a bearer token or basic auth, not both")
	}
	if b.User == "" && !b.Password.IsZero() {
		return errors.New("basic auth password without a user")
	}
	for k := range h.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n") {
			return fmt.Errorf("invalid header name %q", k)
		}
		if strings.EqualFold(k, "Authorization") {
			return errors.New("set Authorization through the bearer token or basic auth, not headers")
		}
	}
	return nil
}

// credentials are what the transport attaches to each request.
type credentials struct {
	bearer    httpclient.SecretSource
	headers   map[string]httpclient.SecretSource
	basic     BasicAuth
	userAgent string
}

// apply sets the credentials on req, re-reading files and variables.
func (c credentials) apply(req *http.Request) error {
	req.Header.Set("User-Agent", c.userAgent)
	for name, src := range c.headers {
		v, err := src.Fetch()
		if err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
		req.Header.Set(name, v.Reveal())
	}
	if !c.bearer.IsZero() {
		tok, err := c.bearer.Fetch()
		if err != nil {
			return fmt.Errorf("bearer token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	}
	if c.basic.User != "" {
		pw, err := c.basic.Password.Fetch()
		if err != nil {
			return fmt.Errorf("basic auth password: %w", err)
		}
		req.SetBasicAuth(c.basic.User, pw.Reveal())
	}
	return nil
}

// secrets returns the current credential values, for scrubbing them from
// error text that a server or proxy may have echoed. Fetch errors are
// irrelevant here: a value that cannot be read cannot leak.
func (c credentials) secrets() []string {
	var out []string
	add := func(src httpclient.SecretSource) string {
		v, err := src.Fetch()
		if err != nil || len(v) < 4 { // short values (a tenant "1") would garble every message
			return ""
		}
		out = append(out, v.Reveal())
		return v.Reveal()
	}
	add(c.bearer)
	for _, src := range c.headers {
		add(src)
	}
	if pw := add(c.basic.Password); pw != "" {
		// The Authorization header carries base64(user:password).
		out = append(out, base64.StdEncoding.EncodeToString([]byte(c.basic.User+":"+pw)))
	}
	return out
}

// authTransport adds credentials to requests for the configured origin
// only, so a redirect to another host, or from https to http, never
// carries them.
type authTransport struct {
	next   http.RoundTripper
	origin *url.URL
	creds  credentials
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, t.origin) {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	if err := t.creds.apply(r); err != nil {
		return nil, errors.Join(err, closeBody(req))
	}
	return t.next.RoundTrip(r)
}

// closeBody honours the RoundTripper contract: the request body is closed
// even when the request is not sent.
func closeBody(req *http.Request) error {
	if req.Body == nil {
		return nil
	}
	return req.Body.Close()
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
