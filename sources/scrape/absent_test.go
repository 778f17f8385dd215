package scrape

import (
	"context"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// pageTarget serves /metrics as mode says: "404", "html" (a gateway's
// catch-all page) or "page" (an exposition).
func pageTarget(t *testing.T, mode string) *target {
	tg := newTarget(t, "")
	setPage(t, tg, mode)
	return tg
}

func setPage(t *testing.T, tg *target, mode string) {
	switch mode {
	case "404":
		tg.serve("", "", true)
	case "html":
		tg.serve("<html><body>gateway</body></html>", "text/html; charset=utf-8", false)
	default:
		tg.serve(readFixture(t, "vllm-v0.10-metrics.txt")+"\n", "text/plain; version=0.0.4", false)
	}
}

// An implied scrape (quick mode) of a URL without a metrics page, a 404
// or a page that is no exposition, is said once as information: one
// source status, no data, saying where and how to silence it; no
// failure, and the page is not fetched again.
func TestImpliedScrapeWithoutPageIsInformation(t *testing.T) {
	for _, mode := range []string{"404", "html"} {
		t.Run(mode, func(t *testing.T) {
			srv := pageTarget(t, mode)
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
		srv := pageTarget(t, "404")
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
		srv := pageTarget(t, "page")
		sink := &collector{}
		s := New(Config{URL: srv.URL, Implied: "--no-scrape to silence"}, sink)
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		setPage(t, srv, "404")
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
