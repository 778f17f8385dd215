// Package scrape reads an LLM serving engine's Prometheus metrics page
// directly (no Prometheus server) and turns it into ttftop
// observations, one endpoint per model served by the target.
//
// Per scrape it emits, for each model: KindEndpoint; KindHistogram with
// the bucket increments since the previous scrape for TTFT, ITL, TPOT,
// E2E and queue time (summed across data-parallel engines and ranks by
// le, never averaged; an interval without requests is a histogram of
// zeros, the first scrape only sets the baseline, and a series seen for
// the first time contributes from its second scrape on); KindSample for
// gauges (running, waiting, KV cache 0–1), and for rates (output tok/s)
// and ratios of counters over a sliding window of the scrapes of the last
// Config.RateWindow (RateWindow: max(10 s, 4 intervals)), each carrying
// the span it covers as its RateWindow; KindHistogram counts for the error
// rate; KindSample Approx for the MBU estimate when configured; KindNoData
// for NaN or 0/0; and one KindSource with the source's health. A restart
// (a count going down, a new _created, a new process_start_time_seconds)
// starts the rate windows afresh from that scrape and skips that interval
// of a histogram or the error counts: no rate spans two lives, none is
// negative; the endpoints are labelled restarted. Failures emit
// KindFailure for every endpoint of the target, so the last good values
// stay and are shown as failed/stale.
package scrape
