package promql

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/telemetry"
)

// History of the viewed window. The live chain (steps.go) fetches every
// step R from a baseline Backfill back; a wider window on screen is filled
// further back by range queries at a coarser step R_b (a multiple of R,
// so the grid meets the chain): one query per signal, chunked, whatever
// the number of endpoints. Consecutive points are differenced exactly, as
// in the chain, and the last point before an endpoint's oldest known point
// is differenced against that point, so history and live windows tile
// time without overlap. The values are marked History: they fill windows
// and charts, never the current state. R_b grows with the window and the
// number of series so that a backfill stays within historyPointBudget
// points per signal (and every query within Prometheus' 11,000 points per
// series): a 24 h window costs no more than a 1 h one, only coarser.

const (
	// historyPointBudget bounds the points (series × steps) one signal's
	// backfill fetches in all.
	historyPointBudget = 300_000
	// historyChunkPoints bounds the points of one query, well inside the
	// default 32 MiB body cap (about 40 bytes a point as JSON).
	historyChunkPoints = 250_000
	// maxPointsPerSeries is Prometheus' limit on a range query's steps.
	maxPointsPerSeries = 11_000
	// minHistorySteps keeps a backfill useful for charts however many
	// series there are.
	minHistorySteps = 12
	// historyPrefetch is how many chunks are fetched ahead of the one
	// being turned into observations.
	historyPrefetch = 2
)

// historyPlan is one signal's backfill: the grid start..end at step, in
// chunks newest first, each its queries (one per template) over one range.
type historyPlan struct {
	signal     telemetry.Signal
	start, end time.Time
	step       time.Duration
	chunks     [][]job
	values     bool                 // a value signal's (samplehistory.go), else a histogram's
	first      map[string]time.Time // values: each endpoint's earliest point
}

// jobCount is how many requests the plans make.
func jobCount(plans []historyPlan) int {
	n := 0
	for _, p := range plans {
		for _, c := range p.chunks {
			n += len(c)
		}
	}
	return n
}

// historyStatus is what the status says about the backfill.
type historyStatus struct {
	from     time.Time     // server time the oldest history begins
	step     time.Duration // the step of the latest backfill
	liveFrom time.Time     // server time where the live chain began
}

// WindowChanged tells the source the window being viewed. When it is
// wider than the history held, the next refresh, started at once, fills
// the difference. It never blocks; it is safe for concurrent use.
func (s *Source) WindowChanged(window time.Duration) {
	if window <= 0 {
		return
	}
	if time.Duration(s.view.Swap(int64(window))) >= window {
		return // narrower: the history held covers it
	}
	s.viewGen.Add(1)
	select {
	case s.wake <- struct{}{}:
	default: // a refresh is already due
	}
}

// viewWindow is the window to hold history for: the viewed one, and at
// least the chain's Backfill.
func (s *Source) viewWindow() time.Duration {
	return max(time.Duration(s.view.Load()), s.cfg.Backfill)
}

// historyStep returns R_b for a span of history over about series series:
// a multiple of R such that steps × series stays within the budget.
func historyStep(span, R time.Duration, series int) time.Duration {
	steps := historyPointBudget / max(series, 1)
	steps = min(max(steps, minHistorySteps), maxPointsPerSeries-1)
	step := max(R, (span+time.Duration(steps)-1)/time.Duration(steps))
	return (step + R - 1) / R * R
}

// historyJobs plans the backfill of every distribution signal whose
// endpoints' history does not reach the viewed window's start. Endpoints
// are considered once the chain has their oldest point.
func (rd *round) historyJobs() []historyPlan {
	s, st := rd.s, &rd.s.state
	R := s.cfg.HistogramStep
	from := rd.lag.end.Add(-s.viewWindow())
	var plans []historyPlan
	for _, sig := range signalsOf(st.queries.hist) {
		if gen := s.viewGen.Load(); rd.began.Before(st.histRetry[sig]) && gen == st.histGen[sig] {
			continue // not due: asked recently, and the window has not widened since
		}
		var upTo time.Time
		for key, o := range st.oldest {
			if key.signal != sig {
				continue
			}
			covered := o.t
			if a, ok := st.asked[key]; ok && a.Before(covered) {
				covered = a
			}
			if covered.After(from.Add(R)) && covered.After(upTo) {
				upTo = covered
			}
		}
		if upTo.IsZero() {
			continue
		}
		// The grid begins at the window's start, so that the window holds
		// exactly the history asked for; its last point comes before the
		// oldest point held, which closes the last window.
		step := historyStep(upTo.Sub(from), R, st.series[sig])
		p := historyPlan{signal: sig, start: alignDown(from, R), step: step}
		p.end = p.start.Add((upTo.Sub(p.start) - 1) / step * step)
		if p.end.Before(p.start) {
			p.end = p.start
		}
		rd.chunk(&p, st.series[sig], st.queries.hist[sig])
		plans = append(plans, p)
	}
	return plans
}

// chunk cuts p's grid into chunks of at most historyChunkPoints for about
// series series, newest first: each is differenced against the one after
// it (the chain's oldest point first), so a failure leaves history whole
// back to where it stopped. Each chunk has one query per template.
func (rd *round) chunk(p *historyPlan, series int, templates []string) {
	perChunk := time.Duration(max(historyChunkPoints/max(series, 1), 1))
	for end := p.end; !end.Before(p.start); end = end.Add(-perChunk * p.step) {
		c := end.Add(-(perChunk - 1) * p.step)
		if c.Before(p.start) {
			c = p.start
		}
		var chunk []job
		for _, tmpl := range templates {
			chunk = append(chunk, job{kind: rangeJob, signal: p.signal, query: rd.s.expand.expand(tmpl),
				rng: v1.Range{Start: c, End: end, Step: p.step}})
		}
		p.chunks = append(p.chunks, chunk)
	}
}

// runHistory fetches the plans' chunks in order, historyPrefetch ahead of
// the one being turned into History (the server and ttftop work at
// once), so at most historyPrefetch+1 chunks' answers are held. A failed chunk ends its plan there:
// what came before it stays (the oldest point held, or what was asked,
// moved back with it), retried after DiscoveryInterval; it is a warning,
// not a failure of the live signal. Every goroutine ends before it
// returns.
func (rd *round) runHistory(ctx context.Context, plans []historyPlan) error {
	type unit struct {
		plan  int
		chunk []job
		last  bool // the plan's last chunk
	}
	var units []unit
	for i, p := range plans {
		for k, c := range p.chunks {
			units = append(units, unit{plan: i, chunk: c, last: k == len(p.chunks)-1})
		}
	}
	failed := make([]bool, len(plans))
	chans := map[int]<-chan []answer{}
	var inFlight []int // units being fetched, in order
	next := 0          // the next unit to fetch
	queue := func() {
		for ; next < len(units) && len(inFlight) < historyPrefetch; next++ {
			if failed[units[next].plan] {
				continue
			}
			ch := make(chan []answer, 1)
			go func(c []job) { ch <- rd.s.runJobs(ctx, c) }(units[next].chunk)
			chans[next], inFlight = ch, append(inFlight, next)
		}
	}
	queue()
	for len(inFlight) > 0 {
		i := inFlight[0]
		inFlight = inFlight[1:]
		ans := <-chans[i]
		delete(chans, i)
		queue() // the next ones are fetched while this one is turned
		if ctx.Err() != nil {
			for _, k := range inFlight {
				<-chans[k]
			}
			return ctx.Err()
		}
		u := units[i]
		if failed[u.plan] {
			continue // fetched before its plan failed
		}
		p := &plans[u.plan]
		a := mergeAnswers(ans)[0]
		var ok bool
		if p.values {
			ok = rd.valueChunk(p, a)
		} else {
			ok = rd.historyChunk(*p, a)
		}
		switch {
		case !ok:
			failed[u.plan] = true
			rd.historyFailed(*p)
		case u.last && p.values:
			rd.valueHistoryDone(*p)
		case u.last:
			rd.historyDone(*p)
		}
	}
	return nil
}

// historyFailed schedules a failed plan's retry.
func (rd *round) historyFailed(p historyPlan) {
	retry := rd.began.Add(rd.s.cfg.DiscoveryInterval)
	if p.values {
		rd.s.state.values.retry[p.signal] = retry
		return
	}
	rd.s.state.histRetry[p.signal] = retry
}

// historyDone records a distribution signal's backfill, fetched whole.
func (rd *round) historyDone(p historyPlan) {
	s, st := rd.s, &rd.s.state
	sig := p.signal
	// What history found, or did not, dates the series' births.
	for key, o := range st.oldest {
		if key.signal == sig {
			st.ages.note(key.endpoint, p.start, o.t, true)
		}
	}
	// Endpoints that come later get their history at most once a
	// DiscoveryInterval (one query covers them all), sooner when the
	// window widens.
	st.histRetry[sig] = rd.began.Add(s.cfg.DiscoveryInterval)
	st.histGen[sig] = s.viewGen.Load()
	for key := range st.oldest {
		if key.signal == sig {
			if a, ok := st.asked[key]; !ok || p.start.Before(a) {
				st.asked[key] = p.start
			}
		}
	}
	if st.hist.from.IsZero() || p.start.Before(st.hist.from) {
		st.hist.from = p.start
	}
	st.hist.step = p.step
}

// historyMatrix returns a history chunk's range vector, its warnings and,
// when it failed, why (retried after DiscoveryInterval) said; ok is
// false then.
func (rd *round) historyMatrix(p *historyPlan, a answer) (model.Matrix, bool) {
	s, sig := rd.s, p.signal
	for _, w := range a.warnings {
		rd.warn(string(sig) + " history: " + w)
	}
	if a.err != nil {
		rd.warn(fmt.Sprintf("%s history (%s back) failed: %s; retried in %s", sig,
			promDuration(rd.lag.end.Sub(p.start)), describeError(a.err, s.cfg.HTTP.Timeout, s.creds.secrets()),
			promDuration(s.cfg.DiscoveryInterval)))
		return nil, false
	}
	mat, ok := a.value.(model.Matrix)
	if !ok {
		rd.warn(fmt.Sprintf("%s history: query returned a %s, want a range vector", sig, valueType(a.value)))
	}
	return mat, ok
}

// historyChunk emits one chunk's windows of a distribution signal, each
// endpoint's last one closed by its oldest point held, which then moves
// back to the chunk's first point. It returns false when the chunk failed.
func (rd *round) historyChunk(p historyPlan, a answer) bool {
	st := &rd.s.state
	sig := p.signal
	mat, ok := rd.historyMatrix(&p, a)
	if !ok {
		return false
	}
	points := map[*endpointState]map[model.Time]*cumPoint{}
	collectPoints(rd, sig, mat, points)
	for e, byT := range points {
		key := cumKey{e.info.Name, sig}
		oldest, ok := st.oldest[key]
		if !ok {
			continue // not in the chain yet: its turn comes once it is
		}
		var chain []*cumPoint
		for _, t := range sortedTimes(byT) {
			if pt := byT[t]; pt.t.Before(oldest.t) && len(pt.buckets) > 0 {
				chain = append(chain, pt)
			}
		}
		if len(chain) == 0 {
			continue
		}
		chain = append(chain, &oldest)
		for i := 1; i < len(chain); i++ {
			rd.historyWindow(e, sig, chain[i-1], chain[i])
		}
		st.oldest[key] = *chain[0]
	}
	return true
}

// historyWindow emits the observations in (prev.t, cur.t] as History.
func (rd *round) historyWindow(e *endpointState, sig telemetry.Signal, prev, cur *cumPoint) {
	sortBuckets(prev)
	sortBuckets(cur)
	buckets, sum, why := diff(*prev, *cur)
	if why != "" {
		rd.warn(fmt.Sprintf("%s history: %s for %s; one window skipped", sig, why, e.info.Name))
		return
	}
	rd.add(telemetry.Observation{Kind: telemetry.KindHistogram, At: rd.s.localEval(cur.t), Endpoint: e.info.Name,
		Signal: sig, Value: sum, Interval: cur.t.Sub(prev.t), Buckets: buckets, History: true})
}

// known returns the endpoints a series applies to without creating one
// (history holds series of endpoints gone since, which must not
// reappear): its replica and the model row its replicas sum into, as the
// live histograms fan in.
func (r *registry) known(m model.Metric) []*endpointState {
	id := r.parser.parse(m)
	if id.join() {
		return nil // GPU series: values, never history
	}
	agg, ok := r.byKey[id.aggregateKey()]
	if !ok {
		return nil
	}
	if id.replicaKey == "" {
		return []*endpointState{agg}
	}
	if rep, ok := r.byKey[id.aggregateKey()+"\x01"+id.replicaKey]; ok {
		return []*endpointState{rep, agg}
	}
	return []*endpointState{agg}
}

// collectPoints gathers a range answer's cumulative points per known
// endpoint and step into points.
func collectPoints(rd *round, sig telemetry.Signal, mat model.Matrix, points map[*endpointState]map[model.Time]*cumPoint) {
	for _, ss := range mat {
		if err := addSeries(points, rd.reg.known(ss.Metric), ss); err != nil {
			rd.warn(fmt.Sprintf("%s: %v", sig, err))
		}
	}
}

// noteChain records, after a chain answer, the series count (it sizes
// the history step) and, for endpoints new to the chain, their oldest
// point (where history must end) and whether their series began inside
// the range (young.go).
func (rd *round) noteChain(a answer) {
	st := &rd.s.state
	mat, ok := a.value.(model.Matrix)
	if !ok || a.err != nil {
		return
	}
	st.series[a.signal] = len(mat)
	fresh := false
	for key := range st.cum {
		if _, ok := st.oldest[key]; !ok && key.signal == a.signal {
			fresh = true
			break
		}
	}
	if !fresh {
		return
	}
	points := map[*endpointState]map[model.Time]*cumPoint{}
	collectPoints(rd, a.signal, mat, points)
	for e, byT := range points {
		key := cumKey{e.info.Name, a.signal}
		if _, tracked := st.cum[key]; !tracked {
			continue
		}
		if _, ok := st.oldest[key]; ok {
			continue
		}
		final := rd.finalAt(e)
		for _, t := range sortedTimes(byT) {
			p := byT[t]
			if p.t.After(final) {
				break
			}
			if len(p.buckets) > 0 {
				sortBuckets(p)
				st.oldest[key] = *p
				st.ages.note(e.info.Name, a.rng.Start, p.t, true)
				if st.hist.liveFrom.IsZero() || p.t.Before(st.hist.liveFrom) {
					st.hist.liveFrom = p.t
				}
				break
			}
		}
	}
}

// sortBuckets orders a point's buckets by bound (answers come sorted by
// the le label as text: "0.01" < "0.5" < "10" < "2.5").
func sortBuckets(p *cumPoint) {
	slices.SortFunc(p.buckets, func(a, b telemetry.Bucket) int { return cmp.Compare(a.UpperBound, b.UpperBound) })
}

// describeHistory says, for the status, what is backfilled and what live.
func (rd *round) describeHistory() string {
	h := rd.s.state.hist
	if h.liveFrom.IsZero() {
		return ""
	}
	live := "live every " + promDuration(rd.s.cfg.HistogramStep) + " since " + rd.s.localEval(h.liveFrom).Format("15:04:05")
	if h.from.IsZero() || !h.from.Before(h.liveFrom) {
		return live
	}
	return fmt.Sprintf("history backfilled from %s every %s; %s", rd.s.localEval(h.from).Format("15:04:05"),
		promDuration(h.step), live)
}
