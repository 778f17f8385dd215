package promql

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// maxWarnings caps the warnings carried by one status.
const maxWarnings = 20

// emit sends, in order, the endpoints discovered this refresh, the values
// (History streamed already, round.add), the failures and the source
// status; it returns the query errors.
func (rd *round) emit(queries int) error {
	s, st := rd.s, &rd.s.state
	if rd.reg.full {
		rd.warn(fmt.Sprintf("more than %d endpoints: new ones ignored (raise max_endpoints or narrow the queries)", s.cfg.MaxEndpoints))
	}
	rd.flush()
	rd.emitFailures()

	status := telemetry.SourceStatus{
		Name:       s.cfg.Name,
		Kind:       telemetry.SourcePromQL,
		URL:        s.url,
		State:      telemetry.Live,
		Latency:    s.now().Sub(rd.began),
		Recognised: st.recognised,
	}
	if len(rd.failed) > 0 {
		st.failures++
		status.State = telemetry.Error
		status.Err = rd.failed[0]
		if len(rd.failed) > 1 {
			status.Err = fmt.Sprintf("%d of %d queries failed; %s", len(rd.failed), queries, rd.failed[0])
		}
	} else {
		st.failures = 0
		st.lastOK = rd.began
	}
	warnings := rd.lagWarnings()
	if w := slowWarning(status.Latency, s.cfg.Refresh); w != "" {
		warnings = append(warnings, w) // after the lag's: the delay a reader sees first
	}
	warnings = append(warnings, rd.warnings...)
	if status.State == telemetry.Live && rd.lag.freshAnswered && rd.lag.newest.IsZero() && rd.values == 0 {
		// The store answers, but holds nothing recent: not "ok".
		status.State = telemetry.NoData
		warnings = append([]string{"no recent samples: the store answered, but with no series of any endpoint (targets not scraped, or ingestion delayed)"}, warnings...)
	}
	status.LastOK, status.Failures = st.lastOK, st.failures
	status.Warnings = warnings[:min(len(warnings), maxWarnings)]
	status.Description = rd.describe(queries)
	report := telemetry.Observation{Kind: telemetry.KindSource, At: rd.began, Source: s.id,
		Interval: s.cfg.Refresh, Err: status.Err, Status: &status}
	s.refreshEnded(&report) // before the sink has it: no in-flight report after it
	s.sink.Observe(report)
	return errorsOf(rd.failed)
}

// slowWarning says when a refresh took so long that the figures arrive
// well after the refresh interval: an answering but slow store is "ok"
// only with this caveat. "" when it kept up.
func slowWarning(took, refresh time.Duration) string {
	if took <= 2*refresh || took < 2*time.Second {
		return ""
	}
	return fmt.Sprintf("slow store: this refresh took %s against a refresh every %s: figures arrive that late (a loaded store, a slow proxy, or too wide queries)",
		roundLag(took), promDuration(refresh))
}

// emitFailures marks the signals whose query failed as failed for every
// endpoint that expects them. When every query failed, one failure per
// endpoint (empty Signal) covers all its signals.
func (rd *round) emitFailures() {
	if len(rd.failed) == 0 {
		return
	}
	all := len(rd.failed) >= rd.ran
	failed := make([]telemetry.Signal, 0, len(rd.failedSig))
	for sig := range rd.failedSig {
		failed = append(failed, sig)
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i] < failed[j] })
	for _, e := range rd.reg.all() {
		if all {
			rd.s.sink.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: rd.began, Endpoint: e.info.Name,
				Source: rd.s.id, Err: rd.failed[0]})
			continue
		}
		for _, sig := range failed {
			if msg := rd.failedSig[sig]; rd.reg.applies(e, sig) {
				rd.s.sink.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: rd.began, Endpoint: e.info.Name,
					Signal: sig, Source: rd.s.id, Err: msg})
			}
		}
	}
}

// describe summarises the source for the header.
func (rd *round) describe(queries int) string {
	s := rd.s
	replicas, models := rd.replicaSummary()
	// Serving endpoints, as the dashboard's header counts them: a model's
	// aggregate row is not one more endpoint.
	d := fmt.Sprintf("%d endpoints%s; %d queries this refresh; rate window %s, histogram step %s",
		len(rd.reg.byName)-models, replicas, queries, promDuration(s.cfg.Window), promDuration(s.cfg.HistogramStep))
	if v := rd.lag; v.lagging {
		d = fmt.Sprintf("lagging %s behind: data delayed; ", roundLag(v.lag)) + d
	} else if v.lagKnown {
		d += "; store lag " + roundLag(v.lag)
	}
	if h := rd.describeHistory(); h != "" {
		d += "; " + h
	}
	if len(s.cfg.GroupBy) > 0 {
		d += "; grouped by " + strings.Join(s.cfg.GroupBy, ", ")
	}
	if !s.state.discovered.IsZero() && len(s.state.recognised) == 0 {
		d += "; no metrics of a known engine, ttftop's exporter or DCGM in the last " + promDuration(s.cfg.Window)
	}
	for _, f := range s.state.active {
		if f.labelless() {
			d += "; " + f.spec.Title + " has no model label: model = job label (or config models by job)"
		}
	}
	return d
}

// noteFound dates the endpoints found in this refresh (retireGone).
func (rd *round) noteFound() {
	for _, e := range rd.reg.all() {
		if e.foundAt.IsZero() {
			e.foundAt = rd.began
		}
	}
}

// retireGone retires the replicas GONE for the viewed window (at least
// MaxLag): a pod replaced, an instance scaled away, listed as GONE until
// then, never dropped unsaid.
func (rd *round) retireGone() {
	s, st := rd.s, &rd.s.state
	keep := max(time.Duration(s.view.Load()), s.cfg.MaxLag)
	for _, e := range rd.reg.all() {
		if e.aggregate == nil || !e.health.gone || rd.began.Sub(e.health.since) <= keep {
			continue
		}
		rd.reg.retire(e)
		st.ages.retired(e.info.Name, e.newestSeen) // back later, it is a new life (young.go)
		for k := range st.cum {
			if k.endpoint == e.info.Name {
				delete(st.cum, k)
			}
		}
		for k := range st.judged {
			if k.endpoint == e.info.Name {
				delete(st.judged, k)
			}
		}
		for k := range st.values.liveFrom {
			if k.endpoint == e.info.Name {
				delete(st.values.liveFrom, k)
				delete(st.values.asked, k)
			}
		}
		rd.retired = append(rd.retired, telemetry.Observation{Kind: telemetry.KindRetire, At: rd.began, Endpoint: e.info.Name, Source: s.id,
			Err: fmt.Sprintf("replica gone since %s (%s), listed for %s", e.health.since.Format(time.TimeOnly), e.health.reason, promDuration(keep))})
	}
}

// replicaSummary says how many endpoints are models and how many their
// replicas: " (3 models, 12 replicas by pod, instance)"; "" without
// replicas.
func (rd *round) replicaSummary() (summary string, models int) {
	replicas := 0
	for _, e := range rd.reg.byName {
		switch {
		case len(e.members) > 0:
			models++
		case e.aggregate != nil:
			replicas++
		}
	}
	if replicas == 0 {
		return "", models
	}
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	return " (" + plural(models, "model") + ", " + plural(replicas, "replica") + " by " + strings.Join(rd.reg.parser.replicas, ", ") + ")", models
}
