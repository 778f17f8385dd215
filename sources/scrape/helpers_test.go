package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/telemetry/telemetrytest"
)

// collector keeps every observation (a concurrency-safe Sink).
type collector = telemetrytest.Collector

func find(obs []telemetry.Observation, kind telemetry.Kind, endpoint string, sig telemetry.Signal) []telemetry.Observation {
	var out []telemetry.Observation
	for _, o := range obs {
		if o.Kind == kind && (endpoint == "*" || o.Endpoint == endpoint) && o.Signal == sig {
			out = append(out, o)
		}
	}
	return out
}

func one(t *testing.T, obs []telemetry.Observation, kind telemetry.Kind, endpoint string, sig telemetry.Signal) telemetry.Observation {
	t.Helper()
	got := find(obs, kind, endpoint, sig)
	if len(got) != 1 {
		t.Fatalf("want one %s %s %s, got %d in\n%s", kind, endpoint, sig, len(got), dump(obs))
	}
	return got[0]
}

func status(t *testing.T, obs []telemetry.Observation) *telemetry.SourceStatus {
	t.Helper()
	o := one(t, obs, telemetry.KindSource, "*", "")
	return o.Status
}

func endpoints(obs []telemetry.Observation) []string {
	var out []string
	for _, o := range obs {
		if o.Kind == telemetry.KindEndpoint {
			out = append(out, o.Endpoint)
		}
	}
	sort.Strings(out)
	return out
}

func dump(obs []telemetry.Observation) string {
	var b strings.Builder
	for _, o := range obs {
		b.WriteString(string(o.Kind) + " " + o.Endpoint + " " + string(o.Signal))
		if o.Err != "" {
			b.WriteString(" err=" + o.Err)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// clock is a manual clock for deterministic rates.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// target is an httptest server whose /metrics body can be swapped (or
// taken away: missing answers 404); it counts the requests for it.
type target struct {
	*httptest.Server
	mu          sync.Mutex
	body        string
	contentType string
	extra       map[string]string // path → JSON body
	missing     bool
	requests    int
}

func newTarget(t *testing.T, body string) *target {
	tg := &target{body: body, contentType: "text/plain; version=0.0.4; charset=utf-8", extra: map[string]string{}}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.mu.Lock()
		defer tg.mu.Unlock()
		if b, ok := tg.extra[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(b))
			return
		}
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		tg.requests++
		if tg.missing {
			http.NotFound(w, r)
			return
		}
		if tg.contentType != "" {
			w.Header().Set("Content-Type", tg.contentType)
		}
		_, _ = w.Write([]byte(tg.body))
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) set(body string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.body = body
}

// serve sets what /metrics answers: a page of contentType, or (missing) 404.
func (tg *target) serve(body, contentType string, missing bool) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.body, tg.contentType, tg.missing = body, contentType, missing
}

// count is how many requests /metrics had.
func (tg *target) count() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.requests
}

func (tg *target) host() string { return strings.TrimPrefix(tg.URL, "http://") }

func readFixture(t testing.TB, name string) string {
	t.Helper()
	return fixtures.Read(t, "metrics", name)
}

// stepper returns a function that sets tg's page, advances clk by 2 s,
// scrapes with s and returns what c collected.
func stepper(t *testing.T, tg *target, s *Scraper, clk *clock, c *collector) func(body string) []telemetry.Observation {
	return func(body string) []telemetry.Observation {
		t.Helper()
		tg.set(body)
		clk.Advance(2 * time.Second)
		if err := s.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		return c.Take()
	}
}
