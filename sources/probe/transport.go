package probe

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// idleConnTimeout stays below uvicorn's 5 s keep-alive so the pool never
// hands out a connection the server is about to close (streams.md
// pitfall 7).
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
	tr.Protocols.SetHTTP1(true)
	if o.HTTP2 {
		tr.Protocols.SetHTTP2(true)
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

func tlsConfig(a Auth) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.ServerName}
	if a.Insecure {
		// Deliberate and reported: Runner warns "TLS NOT VERIFIED", the CLI
		// prints a warning on every run.
		conf.InsecureSkipVerify = true // #nosec G402 -- opt-in --insecure
	}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("CA file holds no PEM certificate")
		}
		conf.RootCAs = pool
	}
	return conf, nil
}
