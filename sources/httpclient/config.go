package httpclient

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Defaults, in one place.
const (
	DefaultTimeout      = 5 * time.Second
	DefaultMaxRedirects = 3
	DefaultMaxBodyBytes = 32 << 20 // 32 MiB
	DefaultUserAgent    = "ttftop"
	// ErrorBodyBytes caps how much of an error response is quoted.
	ErrorBodyBytes = 512
)

// Config configures a Client. The zero value is usable.
type Config struct {
	// BearerToken is sent as "Authorization: Bearer …" when set.
	BearerToken SecretSource `json:"bearer_token,omitzero" yaml:"bearer_token,omitempty"`
	// Headers are extra request headers (API keys: use Env or File).
	Headers map[string]SecretSource `json:"headers,omitempty" yaml:"headers,omitempty"`
	// CAFile is a PEM bundle that replaces the system roots.
	CAFile string `json:"ca_file,omitempty" yaml:"ca_file,omitempty"`
	// ServerName overrides the TLS server name.
	ServerName string `json:"server_name,omitempty" yaml:"server_name,omitempty"`
	// InsecureSkipVerify disables TLS verification (off by default; the
	// views show "TLS NOT VERIFIED" when set).
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty" yaml:"insecure_skip_verify,omitempty"`
	// Timeout bounds one request including its body. Default 5 s.
	Timeout time.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	// MaxRedirects is how many redirects are followed (default 3);
	// negative refuses every redirect.
	MaxRedirects int `json:"max_redirects,omitempty" yaml:"max_redirects,omitempty"`
	// MaxBodyBytes caps a response body. Default 32 MiB.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty" yaml:"max_body_bytes,omitempty"`
	// UserAgent defaults to "ttftop".
	UserAgent string `json:"user_agent,omitempty" yaml:"user_agent,omitempty"`
	// Dial, when set, opens every connection (an SSH tunnel's
	// ssh.Client.DialContext); nil dials directly.
	Dial DialFunc `json:"-" yaml:"-"`
	// Transport, when set, adapts the client's transport (the Kubernetes
	// API server's TLS and credentials, for its pod proxy).
	Transport TransportFunc `json:"-" yaml:"-"`
}

// TransportFunc wraps or replaces a client's transport.
type TransportFunc func(*http.Transport) (http.RoundTripper, error)

// DialFunc opens a connection to addr, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// WithDefaults returns c with every unset field at its default.
func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	return c
}
