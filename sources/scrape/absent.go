package scrape

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

// No metrics page. Quick mode scrapes the /metrics of every URL it
// probes, and most gateways and hosted APIs have none: a 404 there, or a
// page that is not a Prometheus exposition, is no failure of a scrape
// nobody asked for. It is said once, as information (Config.Implied), and
// the page is not fetched again. A page that answered once and then
// fails is a failure like any other.

// notExposition is the error of a page whose Content-Type says it is not
// a Prometheus exposition (an HTML catch-all page, JSON). A page that
// fails to parse is one with a bad line: a failure.
type notExposition struct{ error }

func (e notExposition) Unwrap() error { return e.error }

// absent reports, for an implied scrape that never worked, whether err
// says there is no metrics page; if so it says so once, as the source's
// status, and stops fetching.
func (s *Scraper) absent(at time.Time, latency time.Duration, err error) bool {
	if s.cfg.Implied == "" || !s.st.lastOK.IsZero() || !noMetricsPage(err) {
		return false
	}
	s.st.noPage = true
	st := s.baseStatus(latency)
	st.State = telemetry.NoData
	st.Description = "no engine metrics at " + st.URL + " (" + pageWhy(err) + "): engine figures unavailable; " + s.cfg.Implied
	// No interval: nothing more will come, and this is no stale report.
	s.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: s.source, Status: &st})
	return true
}

// noMetricsPage reports whether err says the URL has no metrics page: it
// answered 404 or 410, or with something that is not an exposition.
func noMetricsPage(err error) bool {
	var herr *httpclient.Error
	if errors.As(err, &herr) {
		return herr.Status == http.StatusNotFound || herr.Status == http.StatusGone
	}
	var ne notExposition
	return errors.As(err, &ne)
}

// pageWhy says briefly why there is no page: "HTTP 404", "response is an
// HTML page, not a Prometheus exposition".
func pageWhy(err error) string {
	var herr *httpclient.Error
	if errors.As(err, &herr) {
		return "HTTP " + strconv.Itoa(herr.Status)
	}
	return err.Error()
}
