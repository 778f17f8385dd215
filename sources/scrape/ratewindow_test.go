package scrape

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// counterPage is a vLLM page with one output-token counter (and its
// _created, 0 for none).
func counterPage(tokens, created float64) string {
	page := fmt.Sprintf("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} %g\n", tokens)
	if created != 0 {
		page += fmt.Sprintf("# TYPE vllm:generation_tokens_created gauge\nvllm:generation_tokens_created{model_name=\"m\"} %g\n", created)
	}
	return page
}

// Rates are over the scrapes of the last RateWindow (10 s at a 1 s
// interval), from the last scrape at or before its start: a table of
// scrapes with known counters and the rate and span each scrape reports.
func TestCounterRateOverWindow(t *testing.T) {
	if got := RateWindow(time.Second); got != 10*time.Second {
		t.Fatalf("rate window at 1s = %s, want 10s", got)
	}
	if got := RateWindow(5 * time.Second); got != 20*time.Second {
		t.Fatalf("rate window at 5s = %s, want 4 intervals, 20s", got)
	}
	type scrapeRow struct {
		after   time.Duration // since the previous scrape
		tokens  float64
		created float64
		rate    float64       // NaN: no rate yet
		span    time.Duration // the RateWindow it carries
	}
	for _, tc := range []struct {
		name string
		rows []scrapeRow
	}{
		{"young span then full window", []scrapeRow{
			{0, 1000, 0, math.NaN(), 0},
			{time.Second, 1010, 0, 10, time.Second}, // two scrapes: Δ/Δt between them
			{time.Second, 1050, 0, 25, 2 * time.Second},
			{8 * time.Second, 1150, 0, 15, 10 * time.Second},          // 150 over the whole 10 s
			{time.Second, 1150, 0, 14, 10 * time.Second},              // base moves to the 1010 scrape
			{11 * time.Second, 1260, 0, 110.0 / 11, 11 * time.Second}, // a gap: the last scrape before it is the base
		}},
		// A restart starts the window afresh: no rate ever averages the
		// old life, the gap and the new one.
		{"reset starts the window afresh", []scrapeRow{
			{0, 1000, 0, math.NaN(), 0},
			{2 * time.Second, 1100, 0, 50, 2 * time.Second},
			{2 * time.Second, 10, 0, math.NaN(), 0}, // the restart: a new first reading
			{2 * time.Second, 50, 0, 20, 2 * time.Second},
			{2 * time.Second, 130, 0, 30, 4 * time.Second},
		}},
		{"_created change is a reset though the value grew", []scrapeRow{
			{0, 1000, 100, math.NaN(), 0},
			{2 * time.Second, 1100, 100, 50, 2 * time.Second},
			{2 * time.Second, 1300, 200, math.NaN(), 0}, // a new process, whatever it served
			{2 * time.Second, 1340, 200, 20, 2 * time.Second},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newTarget(t, "")
			c := &collector{}
			clk := newClock()
			s := New(Config{URL: tg.URL, Now: clk.Now}, c)
			ep := tg.host() + "/m"
			for i, r := range tc.rows {
				tg.set(counterPage(r.tokens, r.created))
				clk.Advance(r.after)
				if err := s.ScrapeOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				got := find(c.Take(), telemetry.KindSample, ep, telemetry.OutputTPS)
				if math.IsNaN(r.rate) {
					if len(got) != 0 {
						t.Fatalf("scrape %d: rate %v before a second scrape", i, got[0].Value)
					}
					continue
				}
				if len(got) != 1 {
					t.Fatalf("scrape %d: %d output tok/s samples, want 1", i, len(got))
				}
				if !near(got[0].Value, r.rate) || got[0].RateWindow != r.span {
					t.Errorf("scrape %d: %v tok/s over %s, want %v over %s", i, got[0].Value, got[0].RateWindow, r.rate, r.span)
				}
			}
		})
	}
}
