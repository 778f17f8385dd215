package promql

import (
	"fmt"
	"slices"
	"time"
)

// What the round learned about how far the store has ingested, and what
// follows for the histogram steps (see steps.go and docs/promql-lag.md).
type lagView struct {
	serverNow time.Time
	// newest is the server time of the newest sample of any endpoint in the
	// freshness answer; zero when it failed or was empty.
	newest time.Time
	// freshAnswered is true when the freshness query succeeded.
	freshAnswered bool
	// end is the newest step to fetch; horizon the newest step that is
	// MaxLag old: from there back, an empty step is no data.
	end, horizon time.Time
	// lag is serverNow − newest, when newest is known.
	lag      time.Duration
	lagKnown bool
	// lagging is true when the lag exceeds what the scrape interval and
	// Delay explain: figures are delayed and the status says so.
	lagging bool
}

// measureLag fixes the round's view of the store's progress, once the
// freshness answer has been read.
func (rd *round) measureLag(serverNow time.Time) {
	cfg := rd.s.cfg
	v := &rd.lag
	v.serverNow = serverNow
	v.end = settledEnd(serverNow, v.newest, cfg.Delay, cfg.MaxLag, cfg.HistogramStep)
	v.horizon = alignDown(serverNow.Add(-cfg.MaxLag), cfg.HistogramStep)
	if !v.newest.IsZero() {
		v.lag, v.lagKnown = max(serverNow.Sub(v.newest), 0), true
		v.lagging = v.lag > cfg.ScrapeInterval+cfg.Delay
	}
}

// lagAllowance is added to the Interval of e's observations while the
// store (or e) lags: their newest values are that much older, and must not
// turn stale for it.
func (rd *round) lagAllowance(e *endpointState) time.Duration {
	cfg, v := rd.s.cfg, rd.lag
	newest := e.newest
	if newest.IsZero() || rd.stopped(e) {
		newest = v.newest // a stopped endpoint lags no more than the store
	}
	if newest.IsZero() {
		return 0
	}
	lag := v.serverNow.Sub(newest)
	if lag <= cfg.ScrapeInterval+cfg.Delay {
		return 0
	}
	return min(lag, cfg.MaxLag)
}

// waitsFor reports whether e's missing steps may still fill: false when the
// store answered the freshness query with other endpoints but not e (e has
// no recent samples at all, so its empty steps are no data), or when e
// has stopped.
func (rd *round) waitsFor(e *endpointState) bool {
	return rd.lag.newest.IsZero() || !e.newest.IsZero() && !rd.stopped(e)
}

// stopped reports whether e's samples have stopped while the store's go
// on: the store answered the freshness query with other endpoints' newest
// samples but none of e's, which it had before, or e's newest sample has
// not moved for frozenAfter and is that far behind the store's newest. Prometheus marks a target's series stale at
// its first failed scrape (target down, or dropped by discovery), so they
// leave instant answers at once; a store that keeps the last sample
// instead (VictoriaMetrics, for up to its staleness interval) shows it
// frozen. Either way a rate over [W] of them still answers from the older
// samples for up to W, and must not pass for a live figure. An endpoint
// that lags but moves on (a lagging shard) has not stopped, nor has any
// endpoint of a store that lags as a whole: its newest samples still
// advance, however late. A model row has stopped once all its replicas
// have: its own newest sample, theirs newest, stands still behind a
// stopped replica's while another replica that lags moves on.
func (rd *round) stopped(e *endpointState) bool {
	if !rd.lag.freshAnswered || rd.lag.newest.IsZero() {
		return false
	}
	if len(e.members) > 0 {
		return !slices.ContainsFunc(e.members, func(m *endpointState) bool { return !rd.stopped(m) })
	}
	if e.dataAt.IsZero() {
		// Never in a freshness answer, while its model's other replicas
		// are: a replica that stopped before it was first seen, known only
		// from rates over [W] of its older samples (QA: a replica killed
		// before ttftop started read 50 tok/s live for the rate window).
		return e.aggregate != nil && slices.ContainsFunc(e.aggregate.members, func(m *endpointState) bool { return !m.newest.IsZero() })
	}
	if e.newest.IsZero() {
		return true
	}
	// Frozen: not moved on for frozenAfter, and that far behind the
	// store's newest (a store that stalls as a whole is late, not dead).
	frozen := rd.frozenAfter()
	return rd.began.Sub(e.advancedAt) > frozen && rd.lag.newest.Sub(e.newest) > frozen
}

// noteRestarts dates a new birth for every endpoint that was stopped and
// moves on again (a restarted engine): its rates are then marked young,
// not shown silently low for a rate window (restarts.go). Run once the
// freshness answer is read, before any value is mapped.
func (rd *round) noteRestarts() {
	for _, e := range rd.reg.all() {
		if len(e.members) > 0 {
			continue
		}
		stopped := rd.stopped(e)
		if stopped {
			e.stoppedAfter = e.newestSeen
		}
		switch last, gone := rd.s.state.ages.goneBefore(e.info.Name); {
		case e.newest.IsZero() || stopped:
		case e.wasStopped:
			rd.restart(e, e.newest, e.stoppedAfter, "back after a stop")
		case gone:
			rd.restart(e, e.newest, last, "back after it was gone")
		}
		e.wasStopped = stopped
	}
	rd.expireRestarts()
}

// stoppedDistributions says, every refresh, that a stopped endpoint's
// distribution signals (TTFT, TPOT…) have no current data: their
// histogram steps only say so once a step has ended (up to a histogram
// step later), and meanwhile the window's quantiles would pass for live
// next to rates already stale. Dated, like its values, by its newest
// sample, so they turn stale from there. A model row whose replicas have
// all stopped too (QA: a lone replica's, the only row shown for it, read
// TTFT live for 21s after the replica row said no data).
func (rd *round) stoppedDistributions() {
	for _, e := range rd.reg.all() {
		if !rd.stopped(e) {
			continue
		}
		for _, sig := range signalsOf(rd.s.state.queries.hist) {
			if rd.reg.appliesHist(e, sig) {
				rd.add(rd.noValue(e, sig, rd.began))
			}
		}
	}
}

// frozenAfter is how long an endpoint's newest sample may stand still
// before its samples count as stopped: two scrapes (or refreshes, when
// longer: a refresh sees at most one step) and the Delay, so that one late
// scrape is not taken for a stop.
func (rd *round) frozenAfter() time.Duration {
	cfg := rd.s.cfg
	return 2*max(cfg.ScrapeInterval, cfg.Refresh) + cfg.Delay
}

// finalAt returns the newest server time up to which e's histogram points
// are final: the round's end, not after e's own newest sample, and never
// before the horizon.
func (rd *round) finalAt(e *endpointState) time.Time {
	f := rd.lag.end
	if !e.newest.IsZero() && e.newest.Before(f) {
		f = e.newest
	}
	if f.Before(rd.lag.horizon) {
		f = rd.lag.horizon
	}
	return f
}

// lagWarnings returns what the status must say about delayed data.
func (rd *round) lagWarnings() []string {
	cfg, v := rd.s.cfg, rd.lag
	var out []string
	switch {
	case v.lagKnown && v.lag > cfg.MaxLag:
		out = append(out, fmt.Sprintf("data delayed: the store's newest samples are %s old, more than max_lag %s; histogram steps older than that which came back empty are given up as no data",
			roundLag(v.lag), promDuration(cfg.MaxLag)))
	case v.lagging:
		out = append(out, fmt.Sprintf("data delayed: lagging %s behind: the store's newest samples are %s old (ingestion or query delay, e.g. VictoriaMetrics -search.latencyOffset); figures trail by that much, and histogram steps are fetched once the store has them (waiting up to max_lag %s)",
			roundLag(v.lag), roundLag(v.lag), promDuration(cfg.MaxLag)))
	}
	// Behind: further behind the freshest endpoint than scrape phases and
	// Delay explain.
	var behind int
	var worst *endpointState
	cut := v.newest.Add(-(cfg.ScrapeInterval + cfg.Delay))
	var stopped []*endpointState
	for _, e := range rd.reg.all() {
		if len(e.members) == 0 && rd.stopped(e) {
			stopped = append(stopped, e)
			continue
		}
		if !e.newest.IsZero() && e.newest.Before(cut) {
			behind++
			if worst == nil || e.newest.Before(worst.newest) {
				worst = e
			}
		}
	}
	if len(stopped) > 0 {
		noun := "replica"
		for _, e := range stopped {
			if e.aggregate == nil {
				noun = "endpoint" // not a replica of a model row
			}
		}
		what := fmt.Sprintf("%d %ss stopped", len(stopped), noun)
		if len(stopped) == 1 {
			what = "1 " + noun + " stopped"
		}
		// No brackets: the header shows the first warning in brackets, cut.
		newest := stopped[0].info.Name + " has had no sample since ttftop started"
		if at := stopped[0].dataAt; !at.IsZero() {
			newest = "the newest sample of " + stopped[0].info.Name + " is " + roundLag(v.serverNow.Sub(rd.s.state.offset.toServer(at))) + " old"
		}
		out = append(out, fmt.Sprintf("%s, target down or gone: no new sample while the others have them; %s; their figures are stale or no data, their histogram steps no data",
			what, newest))
	}
	if behind > 0 {
		out = append(out, fmt.Sprintf("%d endpoints behind the others: the newest sample of %s is %s old; their histogram steps wait (up to max_lag %s)",
			behind, worst.info.Name, roundLag(v.serverNow.Sub(worst.newest)), promDuration(cfg.MaxLag)))
	}
	return out
}

// roundLag formats a lag to the second (to 0.1s under 10s).
func roundLag(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
