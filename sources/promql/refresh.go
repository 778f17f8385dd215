package promql

import (
	"context"
	"errors"
	"sort"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/ttftop/ttftop/telemetry"
)

// refresh runs one refresh. Phase 1 runs the instant queries (freshness,
// gauges) and, when due, the metric-name listing; their evaluation
// timestamps give the server's clock, and the freshness answer the store's
// newest samples. Phase 2 fetches the histogram windows that have ended on
// that clock and that the store has ingested, a signal at a time; phase 3,
// when the viewed window reaches further back than the history held, the
// older history of distribution signals (backfill.go) and of value
// signals (samplehistory.go). Gauges are mapped last, once the range
// answers have told which series are younger than the rate window
// (young.go). The number of requests depends on the number of signals,
// never on the number of endpoints.
func (s *Source) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.state
	began := s.now()
	s.refreshStarted(began)
	defer s.refreshEnded(nil) // a refresh cut short reports nothing

	rd := newRound(s, began)
	if s.cfg.HTTP.InsecureSkipVerify {
		rd.warn("TLS NOT VERIFIED: certificate verification is off")
	}
	listNames := began.Sub(st.discovered) >= s.cfg.DiscoveryInterval
	end := st.offset.toServer(began)
	names := job{kind: namesJob, query: s.match, rng: v1.Range{Start: end.Add(-s.cfg.Window), End: end}}
	if listNames && st.discovered.IsZero() {
		// The first refresh lists the names before anything else, so that
		// its queries are already only those of the engines found.
		for _, a := range s.runJobs(ctx, []job{names}) {
			st.discovered = began
			rd.names(a)
		}
		listNames = false
	}

	var phase1 []job
	for _, q := range st.queries.fresh {
		phase1 = append(phase1, job{kind: instantJob, query: s.expand.expand(q)})
	}
	for _, sig := range signalsOf(st.queries.value) {
		for _, q := range st.queries.value[sig] {
			phase1 = append(phase1, job{kind: instantJob, signal: sig, query: s.expand.expand(q)})
		}
	}
	phase1 = append(phase1, job{kind: instantJob, signal: upSignal, query: s.gen.upQuery()})
	for _, q := range st.queries.kv {
		phase1 = append(phase1, job{kind: instantJob, signal: kvCapacitySignal, query: s.expand.expand(q)})
	}
	for _, q := range st.queries.lora {
		phase1 = append(phase1, job{kind: instantJob, signal: loraSignal, query: s.expand.expand(q)})
	}
	if listNames {
		phase1 = append(phase1, names)
	}
	ans1 := mergeAnswers(s.runJobs(ctx, phase1))
	if ctx.Err() != nil {
		// Shutting down (a snapshot's --duration ending): queries cut
		// short are no failure of the store, and nothing is reported.
		return ctx.Err()
	}
	observed := false
	for _, a := range ans1 {
		if t, ok := evalTime(a.value); ok && a.err == nil {
			if !observed {
				st.offset.observe(t, a.sent, a.received)
				observed = true
			}
			st.rates.observe(t)
		}
	}

	// The freshness answer is read first: it says how far the store has
	// ingested, which bounds the histogram steps worth fetching.
	var up *answer
	for i, a := range ans1 {
		switch {
		case a.signal == upSignal:
			up = &ans1[i]
		case a.kind == namesJob:
			st.discovered = began
			rd.names(a)
		case a.signal == "":
			rd.freshness(a)
		}
	}
	rd.measureLag(st.offset.toServer(s.now()))
	rd.targets(ctx, up)
	rd.noteRestarts()

	// One signal at a time, so that only one signal's answer is held (at
	// 1,000 endpoints each is tens of thousands of bucket series).
	phase2 := 0
	for _, sig := range signalsOf(st.queries.hist) {
		j, ok := rd.histogramJob(sig)
		if !ok {
			continue
		}
		var jobs []job
		for _, q := range st.queries.hist[sig] {
			j.query = s.expand.expand(q)
			jobs = append(jobs, j)
		}
		phase2 += len(jobs)
		ans := mergeAnswers(s.runJobs(ctx, jobs))
		if ctx.Err() != nil {
			return ctx.Err() // shutting down: nothing to report
		}
		for _, a := range ans {
			if rd.histogram(a) && a.rng.End.After(st.lastEnd[a.signal]) {
				st.lastEnd[a.signal] = a.rng.End
			}
			rd.noteChain(a)
		}
	}

	// Phase 3: history of the viewed window, older than the chain, for
	// distribution and value signals; a chunk at a time, so that at most
	// two chunks' answers are held.
	plans := append(rd.historyJobs(), rd.valueHistoryJobs(ans1)...)
	if err := rd.runHistory(ctx, plans); err != nil {
		return err
	}
	// Gauges last: the range answers have told which series are young.
	for _, a := range ans1 {
		switch {
		case a.kind == instantJob && a.signal == kvCapacitySignal:
			rd.kvInfo(a)
		case a.kind == instantJob && a.signal == loraSignal:
			rd.lora(a)
		case a.kind == instantJob && a.signal != "" && a.signal != upSignal:
			rd.gauge(a)
		}
	}
	rd.stoppedDistributions()
	rd.noteCounted() // once the gauges have found every replica
	rd.noteFound()
	rd.emitTargets()
	rd.mbu() // from this refresh's ITL windows and gauges
	return rd.emit(len(phase1) + phase2 + jobCount(plans))
}

// histogramJob plans sig's range query up to the round's end: from the
// step after the newest one fetched or, earlier, from the oldest step an
// endpoint still needs that has since become final (for an endpoint seen
// for the first time, Backfill before its newest final step; while a
// window is viewed (WindowChanged), one step: a baseline, with history,
// phase 3, filling the window behind it). ok is false
// when there is nothing to fetch.
func (rd *round) histogramJob(sig telemetry.Signal) (job, bool) {
	s, st := rd.s, &rd.s.state
	R := s.cfg.HistogramStep
	// While a window is viewed, the chain starts from a baseline: history
	// (backfill.go) fills the window behind it at a step sized to the fleet.
	following := s.view.Load() > 0
	backfill := s.cfg.Backfill
	if following && st.lastEnd[sig].IsZero() {
		backfill = R
	}
	start, ok := stepPlan(rd.lag.end, st.lastEnd[sig], R, backfill)
	if !ok {
		start = rd.lag.end.Add(R)
	}
	for _, e := range rd.reg.all() {
		key := cumKey{e.info.Name, sig}
		p, tracked := st.cum[key]
		if !(tracked || rd.reg.appliesHist(e, sig)) || !rd.waitsFor(e) {
			continue
		}
		final := alignDown(rd.finalAt(e), R)
		frontier := st.judged[key]
		if tracked && p.t.After(frontier) {
			frontier = p.t
		}
		next := frontier.Add(R)
		switch {
		case frontier.IsZero() && following:
			next = final.Add(-R) // a baseline and one window; history does the rest
		case frontier.IsZero() || frontier.Before(rd.lag.horizon):
			next = final.Add(-s.cfg.Backfill) // a baseline, then Backfill of windows
		}
		if next.Before(start) && !next.After(final) {
			start = next
		}
	}
	if earliest := rd.lag.end.Add(-maxBackfillSteps * R); start.Before(earliest) {
		start = earliest
	}
	if start.After(rd.lag.end) {
		return job{}, false
	}
	return job{kind: rangeJob, signal: sig,
		rng: v1.Range{Start: start, End: rd.lag.end, Step: R}}, true
}

// signalsOf returns the signals of a query map in display order, then any
// others by name.
func signalsOf(queries map[telemetry.Signal][]string) []telemetry.Signal {
	var out, extra []telemetry.Signal
	known := map[telemetry.Signal]bool{}
	for _, sig := range telemetry.Signals {
		known[sig] = true
		if _, ok := queries[sig]; ok {
			out = append(out, sig)
		}
	}
	for sig := range queries {
		if !known[sig] {
			extra = append(extra, sig)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i] < extra[j] })
	return append(out, extra...)
}

// errorsOf joins per-query messages into the error RefreshOnce returns.
// Only the sanitised, secret-scrubbed messages are used.
func errorsOf(msgs []string) error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		errs[i] = errors.New(m)
	}
	return errors.Join(errs...)
}

// localEval converts a server timestamp to local time.
func (s *Source) localEval(t time.Time) time.Time { return s.state.offset.toLocal(t) }
