package exporter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTP server limits. The exporter answers small GETs only; the timeouts
// bound what a slow or hostile client can hold (Slowloris needs
// ReadHeaderTimeout).
const (
	readHeaderTimeout = 5 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	scrapeTimeout     = 10 * time.Second
	maxScrapesInUse   = 4
	shutdownTimeout   = 5 * time.Second
)

// Handler serves /metrics (text or OpenMetrics, negotiated) and /healthz.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// A collector error (bad label value) drops that metric, not the
		// whole scrape: losing all metrics would look like an outage.
		ErrorHandling:       promhttp.ContinueOnError,
		Registry:            e.reg, // counts promhttp's own errors
		MaxRequestsInFlight: maxScrapesInUse,
		Timeout:             scrapeTimeout,
	})
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(e.reg, metrics))
	mux.HandleFunc("GET /healthz", e.serveHealth)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "ttftop exporter: /metrics, /healthz") // a client gone away is not an error to act on
	})
	return mux
}

func (e *Exporter) serveHealth(w http.ResponseWriter, _ *http.Request) {
	ok, reason := e.Health()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "unhealthy: %s\n", reason) // nothing to do if the client left
		return
	}
	_, _ = fmt.Fprintf(w, "ok: %s\n", reason)
}

// Serve listens on listen (host:port) and serves Handler until ctx ends,
// then shuts down gracefully. It returns nil after a clean shutdown.
func (e *Exporter) Serve(ctx context.Context, listen string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return fmt.Errorf("exporter: listen: %w", err)
	}
	return e.ServeListener(ctx, ln)
}

// ServeListener is Serve on an existing listener (port 0 in tests, socket
// activation); it closes ln.
func (e *Exporter) ServeListener(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           e.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("exporter: serve: %w", err)
	case <-ctx.Done():
	}
	// ctx is done: a fresh deadline lets in-flight scrapes finish.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("exporter: serve: %w", err)
	}
	if shutErr != nil {
		return fmt.Errorf("exporter: shutdown: %w", shutErr)
	}
	return nil
}
