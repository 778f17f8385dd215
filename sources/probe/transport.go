package probe

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
)

// idleConnTimeout stays below uvicorn's 5 s keep-alive so the pool never
// hands out a connection the server is about to close: reusing one fails
// the request.
const idleConnTimeout = 4 * time.Second

// newClient builds the probe's HTTP client: HTTP/1.1 unless asked, no
// transparent compression (gzip middleware buffers streams), connections
// pooled for reuse, redirects refused (a redirect could carry the key
// elsewhere and would time a different server).
func newClient(o Options) (*http.Client, error) {
	tlsConf, err := tlsConfig(o.Auth)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableCompression:  true,
		MaxIdleConns:        o.Concurrency + 4,
		MaxIdleConnsPerHost: o.Concurrency + 4,
		IdleConnTimeout:     idleConnTimeout,
		// Small per-connection buffers: at hundreds of streams they are
		// much of the memory. Events are small, and the request is written
		// once (a larger body is written through the buffer).
		ReadBufferSize:  4 << 10,
		WriteBufferSize: 1 << 10,
		Protocols:       new(http.Protocols),
	}
	if o.Dial != nil {
		tr.DialContext, tr.Proxy = o.Dial, nil // the tunnel is the way there
	}
	tr.Protocols.SetHTTP1(true)
	if o.HTTP2 {
		tr.Protocols.SetHTTP2(true)
	}
	var rt http.RoundTripper = tr
	if o.Transport != nil {
		if rt, err = o.Transport(tr); err != nil {
			return nil, err
		}
	}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// tlsConfig trusts the CA file in addition to the system roots. Insecure
// is deliberate and reported: Runner warns "TLS NOT VERIFIED", the CLI
// prints a warning on every run.
func tlsConfig(a Auth) (*tls.Config, error) {
	var roots *x509.CertPool
	if a.CAFile != "" {
		roots, _ = x509.SystemCertPool() // nil on error: the CA file alone
	}
	return httpclient.Config{CAFile: a.CAFile, ServerName: a.ServerName, InsecureSkipVerify: a.Insecure}.TLSConfig(roots)
}
