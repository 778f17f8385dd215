package promql

import "time"

// Histogram windows. Each distribution signal's cumulative bucket counters
// (summed per endpoint) are evaluated at multiples of R on the server's
// clock with one range query (step R) per refresh, covering every step
// since the last one fetched: one request per signal, whatever the number of
// endpoints. Consecutive points are differenced exactly — no increase()
// extrapolation — so window k holds the observations scraped in
// (t_{k−1}, t_k], the windows tile time, and their sum over any span is the
// same Δ(cumulative buckets) a direct scrape computes. The last point per
// endpoint is kept between refreshes as the next baseline, so data that
// arrives late counts once, in a later window. Missed steps (after a failure
// or a stall) are caught up, up to Backfill.
//
// Lagging stores (docs/promql-lag.md). A step's value is final only once the
// store holds a sample at or after it: before that, a store with an
// ingestion or query delay (VictoriaMetrics' -search.latencyOffset, Thanos,
// Mimir) answers nothing, or repeats an older value. So steps are fetched
// only up to the newest sample the store shows (freshness query), each
// endpoint's points only up to its own newest sample, and the steps an
// endpoint has not yet filled are fetched again on later refreshes, until
// they are MaxLag old: then an empty step is no data.

// settledEnd returns the newest step to fetch: Delay behind the server's
// clock, not after the store's newest sample (when known), and never more
// than maxLag behind.
func settledEnd(serverNow, newest time.Time, delay, maxLag, step time.Duration) time.Time {
	limit := serverNow.Add(-delay)
	if !newest.IsZero() && newest.Before(limit) {
		limit = newest
	}
	if floor := serverNow.Add(-maxLag); limit.Before(floor) {
		limit = floor
	}
	return alignDown(limit, step)
}

// stepPlan returns the first step to fetch up to end, or ok=false when no
// step has ended since last, the last step fetched (zero at start: the
// range then begins Backfill earlier, its first point a baseline).
func stepPlan(end, last time.Time, step, backfill time.Duration) (start time.Time, ok bool) {
	if !end.After(last) {
		return time.Time{}, false
	}
	earliest := end.Add(-backfill)
	start = last.Add(step)
	if last.IsZero() || start.Before(earliest) {
		start = earliest
	}
	return start, true
}

// alignDown rounds t down to a multiple of step since the Unix epoch.
func alignDown(t time.Time, step time.Duration) time.Time {
	ns := t.UnixNano()
	r := ns % int64(step)
	if r < 0 {
		r += int64(step)
	}
	return time.Unix(0, ns-r)
}

// clockOffset is server time − local time, estimated from the evaluation
// timestamp of an instant query, which the server took between the local
// times the request was sent and answered. VictoriaMetrics gives whole
// seconds (the true time is then within a second of it), Prometheus
// milliseconds. When the clocks can agree within that uncertainty plus
// skewDeadband (request jitter), the offset is zero, so window ends stay
// exact multiples of the step; otherwise it is the middle of the possible
// range.
type clockOffset struct {
	d time.Duration
}

const skewDeadband = 500 * time.Millisecond

func (c *clockOffset) observe(server, sent, received time.Time) {
	var res time.Duration
	if wholeSecond(server) {
		res = time.Second
	}
	lo, hi := server.Add(-res).Sub(received), server.Add(res).Sub(sent)
	if lo-skewDeadband <= 0 && hi+skewDeadband >= 0 {
		c.d = 0
		return
	}
	c.d = lo + (hi-lo)/2
}

func (c clockOffset) toServer(local time.Time) time.Time { return local.Add(c.d) }
func (c clockOffset) toLocal(server time.Time) time.Time { return server.Add(-c.d) }
