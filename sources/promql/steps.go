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

// stepPlan returns the evaluation times to fetch, or ok=false when no step
// has ended. serverNow is the server's clock, last the last step fetched
// (zero at start: the range then begins Backfill earlier, its first point a
// baseline).
func stepPlan(serverNow, last time.Time, step, delay, backfill time.Duration) (start, end time.Time, ok bool) {
	end = alignDown(serverNow.Add(-delay), step)
	if !end.After(last) {
		return time.Time{}, time.Time{}, false
	}
	earliest := end.Add(-backfill)
	start = last.Add(step)
	if last.IsZero() || start.Before(earliest) {
		start = earliest
	}
	return start, end, true
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
// timestamp of an instant query against the local midpoint of the request.
// Offsets under skewDeadband are request jitter on synchronised clocks and
// count as zero, so window ends stay exact multiples of the step.
type clockOffset struct {
	d time.Duration
}

const skewDeadband = 500 * time.Millisecond

func (c *clockOffset) observe(server, localMid time.Time) {
	c.d = server.Sub(localMid)
	if c.d > -skewDeadband && c.d < skewDeadband {
		c.d = 0
	}
}

func (c clockOffset) toServer(local time.Time) time.Time { return local.Add(c.d) }
func (c clockOffset) toLocal(server time.Time) time.Time { return server.Add(-c.d) }
