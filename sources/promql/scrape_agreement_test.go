//go:build integration

package promql

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/internal/sim"
	"github.com/ttftop/ttftop/sources/scrape"
	"github.com/ttftop/ttftop/telemetry"
)

// checkScrapeAgreement feeds the direct scraper (sources/scrape) the two
// bodies Prometheus scraped at the edges of the PromQL windows. Same
// traffic, same scrapes: the scraper's one increment must equal the sum of
// the PromQL windows, bucket by bucket, for every model and signal.
func checkScrapeAgreement(ctx context.Context, t *testing.T, rec *recorder, snaps *snapshots, prom *promtest.Server, models []sim.ModelSpec, step time.Duration) {
	first := models[0].Name
	hs := lastRun(rec.find(telemetry.KindHistogram, first, telemetry.ITL), step)
	if len(hs) == 0 {
		t.Fatal("no PromQL windows")
	}
	from, to := hs[0].At.Add(-step), hs[len(hs)-1].At
	edge := func(at time.Time) snapshot {
		return snaps.nearest(t, prom.ScrapeTime(t, fmt.Sprintf("vllm:num_requests_running{model_name=%q}", first), at))
	}
	bodies := []snapshot{edge(from), edge(to)}

	replay := &replayTarget{}
	srv := httptest.NewServer(replay)
	defer srv.Close()
	srec := &recorder{}
	sc := scrape.New(scrape.Config{URL: srv.URL, Name: "direct"}, srec)
	for _, b := range bodies {
		replay.set(b.body, b.ctype)
		if err := sc.ScrapeOnce(ctx); err != nil {
			t.Fatalf("direct scrape: %v", err)
		}
	}
	for _, m := range models {
		for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.ITL, telemetry.TPOT, telemetry.E2E} {
			var promql []telemetry.Bucket
			for _, h := range rec.find(telemetry.KindHistogram, m.Name, sig) {
				if h.At.After(from) && !h.At.After(to) {
					promql = addBuckets(promql, h.Buckets)
				}
			}
			direct := scrapedHistogram(srec, m.Name, sig)
			if direct == nil || !sameBuckets(promql, direct) {
				t.Errorf("%s %s: PromQL windows %v, direct scrape %v", m.Name, sig, promql, direct)
			}
		}
	}
}

// scrapedHistogram returns the direct scraper's increment for a model.
func scrapedHistogram(rec *recorder, model string, sig telemetry.Signal) []telemetry.Bucket {
	names := map[string]bool{}
	for _, e := range rec.find(telemetry.KindEndpoint, "", "") {
		if e.Info.Model == model {
			names[e.Endpoint] = true
		}
	}
	var out []telemetry.Bucket
	for _, h := range rec.find(telemetry.KindHistogram, "", sig) {
		if names[h.Endpoint] {
			out = addBuckets(out, h.Buckets)
		}
	}
	return out
}

func sameBuckets(a, b []telemetry.Bucket) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i].UpperBound != b[i].UpperBound || math.Abs(a[i].Count-b[i].Count) > 1e-9 {
			return false
		}
	}
	return true
}

// replayTarget serves a fixed metrics body.
type replayTarget struct {
	mu    sync.Mutex
	body  []byte
	ctype string
}

func (r *replayTarget) set(body []byte, ctype string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.body, r.ctype = body, ctype
}

func (r *replayTarget) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	body, ctype := r.body, r.ctype
	r.mu.Unlock()
	w.Header().Set("Content-Type", ctype)
	if _, err := w.Write(body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
