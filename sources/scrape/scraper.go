package scrape

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/internal/loop"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// Scraper scrapes one target. Create it with New; use Run for the loop or
// ScrapeOnce for one scrape. Safe for concurrent use (scrapes serialise).
type Scraper struct {
	cfg        Config
	sink       telemetry.Sink
	client     *httpclient.Client
	initErr    error
	baseURL    string // redacted, for Endpoint.BaseURL
	metricsURL string
	source     string // "scrape:<redacted metrics url>"
	host       string // endpoint name prefix
	table      *engines.Table
	seed       maphash.Seed

	mu sync.Mutex
	st state
}

// New returns a scraper for cfg that reports to sink. Configuration errors
// (bad URL, unreadable CA file) are reported by every scrape.
func New(cfg Config, sink telemetry.Sink) *Scraper {
	cfg = cfg.WithDefaults()
	s := &Scraper{cfg: cfg, sink: sink, st: newState(cfg.RateWindow), table: engines.NewTable(), seed: maphash.MakeSeed()}
	base := strings.TrimRight(cfg.URL, "/")
	s.metricsURL = base + "/" + strings.TrimLeft(cfg.Path, "/")
	s.baseURL = httpclient.Redact(base)
	s.source = telemetry.SourceScrape.At(httpclient.Redact(s.metricsURL))
	u, err := url.Parse(base)
	switch {
	case err != nil:
		s.initErr = fmt.Errorf("scrape URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		s.initErr = fmt.Errorf("scrape URL %s: scheme must be http or https", httpclient.Redact(base))
	case u.Host == "":
		s.initErr = fmt.Errorf("scrape URL %s: no host", httpclient.Redact(base))
	}
	s.host = cfg.Name
	if s.host == "" && u != nil {
		s.host = sanitize.Text(u.Host)
	}
	if s.initErr == nil {
		s.client, s.initErr = httpclient.New(cfg.HTTP)
	}
	return s
}

// Run scrapes every Interval (±Jitter, first scrape after a random offset
// within one interval) until ctx is done, then returns ctx.Err(). Failed
// scrapes are reported as observations and do not stop the loop.
func (s *Scraper) Run(ctx context.Context) error {
	defer func() {
		if s.client != nil {
			s.client.CloseIdle()
		}
	}()
	return loop.Run(ctx, s.cfg.Interval, s.cfg.Jitter, s.ScrapeOnce)
}

// ScrapeOnce performs one scrape and emits its observations. It returns
// the scrape's error (also emitted as KindFailure and KindSource).
func (s *Scraper) ScrapeOnce(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.cfg.Now()
	start := time.Now()
	if s.initErr != nil {
		s.fail(at, 0, s.initErr)
		return s.initErr
	}
	if s.st.noPage {
		return nil // no metrics page, and none asked for: said once (absent.go)
	}
	accept := expo.AcceptText
	if s.cfg.OpenMetrics {
		accept = expo.AcceptOpenMetrics
	}
	resp, err := s.client.Get(ctx, s.metricsURL, accept)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // shutting down: a scrape cut short is no failure of the target
	}
	if err != nil && s.absent(at, time.Since(start), err) {
		return nil
	}
	if err != nil {
		err = withHint(err)
		s.fail(at, time.Since(start), err)
		return err
	}
	if err := s.process(ctx, resp.Body, resp.Header, at, start); err != nil {
		if s.absent(at, time.Since(start), err) {
			return nil
		}
		s.fail(at, time.Since(start), err)
		return err
	}
	return nil
}

// process parses a fetched page and emits its observations.
func (s *Scraper) process(ctx context.Context, body string, h http.Header, at, start time.Time) error {
	om, warning, err := expo.FormatOf(h)
	if err != nil {
		return notExposition{err}
	}
	page, err := expo.Parse(body, expo.Options{
		Want:        s.wants,
		StripPrefix: s.cfg.StripPrefix,
		OpenMetrics: om,
		SizeHint:    s.st.families,
	})
	if err != nil {
		return err // a page with a bad line is an exposition all the same: a failure
	}
	s.st.families = len(page.Names)
	sc := s.newScrape(ctx, page, at)
	if warning != "" {
		sc.warn(warning)
	}
	sc.run()
	s.succeed(sc, time.Since(start))
	return nil
}

// withHint adds what usually causes a 404 on a metrics path.
func withHint(err error) error {
	var herr *httpclient.Error
	if errors.As(err, &herr) && herr.Status == 404 {
		herr.Msg += " (metrics disabled or wrong path? SGLang needs --enable-metrics, llama.cpp --metrics; " +
			"NIM serves /v1/metrics, trtllm-serve /prometheus/metrics)"
	}
	return err
}

// fail reports a failed scrape: KindFailure for every endpoint the target
// had, so their last values stay and are marked failed, then the status.
func (s *Scraper) fail(at time.Time, latency time.Duration, err error) {
	s.st.failures++
	msg := err.Error()
	for _, name := range s.st.endpointNames() {
		s.sink.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: at, Endpoint: name,
			Source: s.source, Interval: s.cfg.Interval, Err: msg})
	}
	s.targetDown(at, msg)
	st := s.baseStatus(latency)
	st.State = telemetry.Error
	st.Err = msg
	if s.st.engine != "" {
		st.Description = fmt.Sprintf("%s (last detected)", s.st.engine)
	}
	s.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: s.source,
		Interval: s.cfg.Interval, Status: &st})
}
