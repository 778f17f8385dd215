package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tokentop/tokentop/telemetry"
)

// pageServer answers /metrics as its mode says: "404", "html" (a
// gateway's catch-all page) or "page" (an exposition), counting requests.
type pageServer struct {
	*httptest.Server
	mu       sync.Mutex
	mode     string
	page     string
	requests int
}

func newPageServer(t *testing.T, mode string) *pageServer {
	p := &pageServer{mode: mode, page: readFixture(t, "vllm-v0.10-metrics.txt") + "\n"}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.requests++
		switch p.mode {
		case "404":
			http.NotFound(w, r)
		case "html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<html><body>gateway</body></html>"))
		default:
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte(p.page))
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pageServer) set(mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
}

func (p *pageServer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// An implied scrape (quick mode) of a URL without a metrics page, a 404
// or a page that is no exposition, is said once as information: one
// source status, no data, saying where and how to silence it; no
// failure, and the page is not fetched again.
func TestImpliedScrapeWithoutPageIsInformation(t *testing.T) {
	for _, mode := range []string{"404", "html"} {
		t.Run(mode, func(t *testing.T) {
			srv := newPageServer(t, mode)
			sink := &collector{}
			s := New(Config{URL: srv.URL, Implied: "--no-scrape to silence"}, sink)
			for range 3 {
				if err := s.ScrapeOnce(context.Background()); err != nil {
					t.Fatalf("scrape: %v, want none: a page nobody asked for is missing", err)
				}
			}
			obs := sink.All()
			st := status(t, obs)
			if st.State != telemetry.NoData || st.Err != "" || !strings.Contains(st.Description, "no engine metrics at "+srv.URL+"/metrics") ||
				!strings.HasSuffix(st.Description, "engine figures unavailable; --no-scrape to silence") {
				t.Errorf("status %+v: want no data, no error, the information", st)
			}
			for _, o := range obs {
				if o.Kind == telemetry.KindFailure || o.Kind == telemetry.KindSource && o.Interval != 0 {
					t.Errorf("observation %+v: want no failure, and a status that promises no cadence", o)
				}
			}
			if n := srv.count(); n != 1 {
				t.Errorf("%d requests for the page, want 1: it is not fetched again", n)
			}
		})
	}
}

// The same page is a failure when the scrape was asked for (--scrape, a
// config endpoint's metrics:), and when an implied scrape worked before.
func TestMissingPageFailsWhenAskedForOrSeenBefore(t *testing.T) {
	t.Run("asked for", func(t *testing.T) {
		srv := newPageServer(t, "404")
		sink := &collector{}
		s := New(Config{URL: srv.URL}, sink)
		if err := s.ScrapeOnce(context.Background()); err == nil {
			t.Fatal("scrape of a 404 page asked for: no error")
		}
		if st := status(t, sink.All()); st.State != telemetry.Error {
			t.Errorf("status %+v: want an error", st)
		}
	})
	t.Run("worked before", func(t *testing.T) {
		srv := newPageServer(t, "page")
		sink := &collector{}
		s := New(Config{URL: srv.URL, Implied: "--no-scrape to silence"}, sink)
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		srv.set("404")
		sink.Reset()
		if err := s.ScrapeOnce(context.Background()); err == nil {
			t.Fatal("a page that worked and now answers 404: no error")
		}
		if st := status(t, sink.All()); st.State != telemetry.Error {
			t.Errorf("status %+v: want an error", st)
		}
		if got := find(sink.All(), telemetry.KindFailure, "*", ""); len(got) == 0 {
			t.Error("no failure for the endpoints the page had")
		}
	})
}
