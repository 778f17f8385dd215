package kube

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"k8s.io/client-go/rest"
)

// URL is the base URL of a pod's port: through the API server's
// pods/proxy subresource (https://api/api/v1/namespaces/NS/pods/NAME:PORT/proxy),
// or in-cluster its IP directly.
func (c *Cluster) URL(namespace, name, ip string, port int) string {
	if c.InCluster && ip != "" {
		return "http://" + net.JoinHostPort(ip, strconv.Itoa(port))
	}
	return fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/proxy", c.apiRoot(),
		url.PathEscape(namespace), url.PathEscape(name+":"+strconv.Itoa(port)))
}

// apiRoot is the API server's URL without a trailing slash, with its
// path prefix when it has one (a gateway in front).
func (c *Cluster) apiRoot() string {
	u, err := url.Parse(c.config.Host)
	if err != nil || u.Scheme == "" {
		return "https://" + c.config.Host
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// Transport adapts an HTTP transport to the API server: its TLS
// settings and credentials (token, client certificate, exec plugin) from
// the kubeconfig. nil in-cluster, where pods are reached directly.
func (c *Cluster) Transport() func(*http.Transport) (http.RoundTripper, error) {
	if c.InCluster {
		return nil
	}
	cfg := c.config
	return func(base *http.Transport) (http.RoundTripper, error) {
		tlsCfg, err := rest.TLSConfigFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("kube: TLS for %s: %w", cfg.Host, err)
		}
		t := base.Clone()
		if tlsCfg != nil {
			t.TLSClientConfig = tlsCfg
		}
		rt, err := rest.HTTPWrappersForConfig(cfg, t)
		if err != nil {
			return nil, err
		}
		return podProxy{rt}, nil
	}
}

// podProxy adapts requests and answers to the API server's pod proxy.
//
// It sends request bodies chunked: with a Content-Length the API
// server's proxy (Go's httputil.ReverseProxy) reads the client's body
// once more for its end after passing it on; a pod that answers in that
// moment has the server close that body under it, and the proxy then
// closes its own connection to the pod and aborts the answer after its
// 200 (one probe in 20 to 50 against the test API server). A chunked
// body is read to its end before the pod can have all of it.
//
// It names the API server as the one that broke off an answer: through
// pods/proxy a body's read fails when the API server aborts the response
// (its read from the pod failed, or the pod closed), and a bare
// "unexpected EOF" would read as the model's doing.
type podProxy struct{ next http.RoundTripper }

func (p podProxy) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.ContentLength > 0 {
		req = req.Clone(req.Context())
		req.ContentLength = -1 // unknown: chunked
	}
	resp, err := p.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = abortNamingBody{resp.Body}
	return resp, nil
}

type abortNamingBody struct{ io.ReadCloser }

func (b abortNamingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("the Kubernetes API server's pod proxy aborted the response: %w", err)
	}
	return n, err
}
