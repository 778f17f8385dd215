package promql

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/telemetry"
)

// round turns one refresh's answers into observations.
type round struct {
	s        *Source
	reg      *registry
	began    time.Time
	obs      []telemetry.Observation // live values, emitted by flush
	flushed  bool                    // flush ran: History goes straight to the sink
	warnings []string
	// failed holds "<query>: <message>" per failed query; failedSig the
	// signals whose query failed, with their message.
	failed    []string
	failedSig map[telemetry.Signal]string
	ran       int // queries that ran
	values    int // samples and histogram windows emitted
	retired   []telemetry.Observation
	lag       lagView
	// kv is the KV-cache query's answer per endpoint, mbuIn the live
	// figures MBU reads, noted as added: a flush (history) empties obs
	// before MBU runs (mbu.go).
	kv    map[*endpointState]*kvState
	mbuIn map[string]*mbuInputs
}

func newRound(s *Source, began time.Time) *round {
	for _, e := range s.state.reg.all() {
		e.newest = time.Time{} // until this refresh's freshness answer says
	}
	return &round{s: s, reg: s.state.reg, began: began, failedSig: map[telemetry.Signal]string{}}
}

func (rd *round) warn(w string) {
	for _, x := range rd.warnings {
		if x == w {
			return
		}
	}
	rd.warnings = append(rd.warnings, w)
}

// outcome records a query's warnings and error; it returns false when the
// query failed.
func (rd *round) outcome(a answer, label string) bool {
	rd.ran++
	for _, w := range a.warnings {
		rd.warn(label + ": " + w)
	}
	for _, i := range a.infos {
		rd.warn(label + ": info: " + i)
	}
	if a.err == nil {
		return true
	}
	msg := describeError(a.err, rd.s.cfg.HTTP.Timeout, rd.s.creds.secrets())
	rd.failed = append(rd.failed, label+": "+msg)
	if a.signal != "" {
		rd.failedSig[a.signal] = msg
	}
	return false
}

func (rd *round) add(o telemetry.Observation) {
	if o.Kind == telemetry.KindSample || o.Kind == telemetry.KindHistogram {
		rd.values++
	}
	o.Source = rd.s.id
	if !o.History {
		rd.noteMBUInput(o)
	}
	if o.History {
		// Streamed, not held (a 1 h backfill of 1,000 endpoints is tens
		// of MB of observations), after the live values so far: a track's
		// first live value sizes its chart (telemetry), which history,
		// older, then fills.
		if !rd.flushed {
			rd.flush()
		}
		rd.s.sink.Observe(o)
		return
	}
	rd.obs = append(rd.obs, o)
}

// flush sends, in order, the endpoints retired, those discovered so far
// and the live values so far: retired first, since a replica retired may
// be found again under its name in the same refresh (its rates over [W]
// still answer), and its retirement must not end the new one.
func (rd *round) flush() {
	rd.flushed = true
	s := rd.s
	for _, o := range rd.retired {
		s.sink.Observe(o)
	}
	for _, e := range rd.reg.takeFresh() {
		info := e.info
		info.Labels = maps.Clone(info.Labels) // the registry's own changes later (markDerived, clearDerived)
		s.sink.Observe(telemetry.Observation{Kind: telemetry.KindEndpoint, At: rd.began, Endpoint: info.Name, Source: s.id, Info: &info})
	}
	for _, o := range rd.obs {
		s.sink.Observe(o)
	}
	rd.retired, rd.obs = nil, nil
}

// names records which metric families Prometheus holds. Listing them is
// a convenience (some proxies refuse label APIs): a failure is a warning.
func (rd *round) names(a answer) {
	for _, w := range a.warnings {
		rd.warn("metric names: " + w)
	}
	for _, i := range a.infos {
		rd.warn("metric names: info: " + i)
	}
	if a.err != nil {
		rd.warn("listing metric names failed: " + describeError(a.err, rd.s.cfg.HTTP.Timeout, rd.s.creds.secrets()))
		return
	}
	present := map[string]bool{}
	dcgm := false
	for _, n := range a.names {
		present[string(n)] = true
		dcgm = dcgm || strings.HasPrefix(string(n), "DCGM_")
	}
	var active []*family
	var rec []string
	for _, f := range rd.s.fams {
		for _, n := range f.series {
			if present[n] {
				active = append(active, f)
				rec = append(rec, f.tag)
				break
			}
		}
	}
	if dcgm {
		rec = append(rec, gpuTag)
	}
	if len(active) == 0 {
		// Nothing found (yet: a lagging store, targets not scraped): keep
		// asking for every engine.
		active, dcgm = rd.s.fams, true
	}
	st := &rd.s.state
	st.recognised = rec
	if !sameFamilies(active, st.active) || dcgm != st.gpu {
		rd.s.activate(active, dcgm)
	}
}

func sameFamilies(a, b []*family) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// freshness dates each endpoint's newest sample, which also says how far
// the store has ingested; it discovers endpoints.
func (rd *round) freshness(a answer) {
	if !rd.outcome(a, "freshness") {
		return
	}
	vec, ok := rd.vector(a, "freshness")
	if !ok {
		return
	}
	rd.lag.freshAnswered = true
	for _, smp := range vec {
		v := float64(smp.Value)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		// timestamp() gives seconds with millisecond resolution.
		newest := time.UnixMilli(int64(math.Round(v * 1000)))
		at := rd.s.localEval(newest)
		for _, e := range rd.reg.resolve(smp.Metric, true) {
			if at.After(e.dataAt) {
				e.dataAt = at
			}
			if newest.After(e.newestSeen) { // server time: clock-offset jitter is no advance
				e.newestSeen, e.advancedAt = newest, rd.began
			}
			if newest.After(e.newest) {
				e.newest = newest
			}
		}
		if newest.After(rd.lag.newest) {
			rd.lag.newest = newest
		}
	}
}

// vector returns an instant answer's vector, recording a failure for any
// other result type.
func (rd *round) vector(a answer, label string) (model.Vector, bool) {
	vec, ok := a.value.(model.Vector)
	if !ok {
		msg := fmt.Sprintf("query returned a %s, want an instant vector", valueType(a.value))
		rd.failed = append(rd.failed, label+": "+msg)
		if a.signal != "" {
			rd.failedSig[a.signal] = msg
		}
	}
	return vec, ok
}

func valueType(v model.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().String()
}

// gauge maps an instant answer of a value signal: one value per endpoint;
// NaN, ±Inf and absent series are "no data", never 0. Series that name no
// endpoint (DCGM per host or pod) are joined to replicas (gpu.go).
func (rd *round) gauge(a answer) {
	sig := a.signal
	if !rd.outcome(a, string(sig)) {
		return
	}
	vec, ok := rd.vector(a, string(sig))
	if !ok {
		return
	}
	got := map[*endpointState]bool{}
	replicaValues := map[*endpointState]float64{}
	rows := map[*endpointState]liveSum{} // model rows summed from their live replicas
	var joins model.Vector
	rated := false
	for _, q := range rd.s.state.queries.value[sig] {
		rated = rated || ratedOverWindow(q)
	}
	for _, smp := range vec {
		if rd.reg.parser.parse(smp.Metric).join() {
			joins = append(joins, smp)
			continue
		}
		eval := rd.s.localEval(smp.Timestamp.Time())
		derived := string(smp.Metric[derivedTag])
		approx := derived != "" || smp.Metric[meanTag] != ""
		for _, e := range rd.reg.resolve(smp.Metric, false) {
			if got[e] {
				rd.warn(fmt.Sprintf("%s: several series for endpoint %s; aggregate the query by the grouping labels", sig, e.info.Name))
				continue
			}
			got[e] = true
			if derived != "" {
				rd.reg.markDerived(e, sig, derived)
			}
			if v := float64(smp.Value); e.aggregate != nil && finite(v) {
				replicaValues[e] = v
			}
			if rd.leavesOutStopped(e, sig) {
				rows[e] = liveSum{eval: eval, approx: approx, rated: rated}
				continue
			}
			rd.value(e, sig, eval, float64(smp.Value), approx, rated)
		}
	}
	for _, e := range rd.reg.all() {
		if p, ok := rows[e]; ok {
			rd.sumLive(e, sig, p, replicaValues)
		}
	}
	if len(joins) > 0 {
		// Dated by the evaluation: the GPU series are not the endpoint's.
		eval := rd.s.localEval(joins[0].Timestamp.Time())
		for e, v := range rd.joinGPU(sig, joins) {
			got[e] = true
			e.seenValue[sig] = true
			o := telemetry.Observation{Kind: telemetry.KindSample, At: eval, Endpoint: e.info.Name, Signal: sig, Value: v.value,
				Interval: rd.valueInterval(e), Share: v.share}
			if finite(v.age) {
				// The energy counter's rate over [W] (gpuPowerExpr).
				o.RateWindow, o.SeriesAge = rd.s.cfg.Window, rd.gpuYoung(v.age)
			}
			rd.add(o)
		}
	}
	for _, e := range rd.reg.all() {
		if !got[e] && rd.reg.appliesValue(e, sig) {
			rd.add(rd.noValue(e, sig, rd.began))
		}
	}
}

// noValue is sig's "no data" for e, dated eval; a stopped endpoint's is
// dated by its newest sample instead, so that its figures keep their last
// value and turn stale from there rather than read "no data" as of now.
func (rd *round) noValue(e *endpointState, sig telemetry.Signal, eval time.Time) telemetry.Observation {
	at := eval
	if rd.stopped(e) {
		at = valueAt(e, eval)
	}
	return telemetry.Observation{Kind: telemetry.KindNoData, At: at, Endpoint: e.info.Name, Signal: sig, Interval: rd.valueInterval(e)}
}

// value emits one endpoint's instant value, dated by its newest sample
// when that is older than the evaluation.
func (rd *round) value(e *endpointState, sig telemetry.Signal, eval time.Time, v float64, approx, rated bool) {
	at := valueAt(e, eval)
	if math.IsNaN(v) || math.IsInf(v, 0) || rd.stopped(e) {
		// A stopped endpoint's rate answers from samples up to W old: no
		// current value.
		rd.add(rd.noValue(e, sig, at))
		return
	}
	e.seenValue[sig] = true
	if key := (cumKey{e.info.Name, sig}); rd.s.state.values.liveFrom[key].IsZero() {
		rd.s.state.values.liveFrom[key] = rd.s.state.offset.toServer(at) // where its history ends
	}
	o := telemetry.Observation{Kind: telemetry.KindSample, At: at, Endpoint: e.info.Name, Signal: sig, Value: v,
		Approx: approx, Interval: rd.valueInterval(e)}
	if rated {
		// Taken over [W], not the viewed window; over a series younger
		// than W a counter's rate reads low: say both.
		o.RateWindow = rd.s.cfg.Window
		o.SeriesAge = rd.youngest(e)
	}
	rd.add(o)
}

// youngest is the age of e's series when its rates over the window read
// low (0 otherwise: older, or VictoriaMetrics' true rate of a young
// series); a model row's is its youngest replica's, since a sum over
// replicas one of which is new or restarted reads low too.
func (rd *round) youngest(e *endpointState) time.Duration {
	ages, now, w := rd.s.state.ages, rd.lag.serverNow, rd.s.cfg.Window
	divides := rd.s.state.rates.dividesByWindow()
	age, _ := ages.youngFor(e.info.Name, now, w, divides)
	for _, m := range e.members {
		if a, ok := ages.youngFor(m.info.Name, now, w, divides); ok && (age == 0 || a < age) {
			age = a
		}
	}
	return age
}

// gpuYoung is the age of an energy series ageS seconds old when its rate
// over [W] reads low (younger than W, on a store dividing by the whole
// window); 0 otherwise. The age is known to within a step R, and an old
// series can read up to R short of W: younger than W − R is young.
func (rd *round) gpuYoung(ageS float64) time.Duration {
	age := time.Duration(ageS * float64(time.Second))
	if !rd.s.state.rates.dividesByWindow() || age >= rd.s.cfg.Window-rd.s.cfg.HistogramStep {
		return 0
	}
	return max(age, time.Millisecond) // set, however young
}

// valueAt dates an instant value evaluated at eval (local time): by the
// endpoint's newest sample when that is older.
func valueAt(e *endpointState, eval time.Time) time.Time {
	if !e.dataAt.IsZero() && e.dataAt.Before(eval) {
		return e.dataAt
	}
	return eval
}

// valueInterval is the staleness interval of e's values: a scrape (or a
// refresh, when longer) plus the lag allowed for. A stopped endpoint's is
// a refresh: each refresh has found it without a new sample, so its
// last values turn stale a few refreshes after its newest sample, not a
// few configured scrape intervals (the default 15s may be far longer than
// the real one). No lag is allowed for: that it stopped is known as of
// the store's newest samples, however late they are.
func (rd *round) valueInterval(e *endpointState) time.Duration {
	if rd.stopped(e) {
		return rd.s.cfg.Refresh
	}
	return max(rd.s.cfg.Refresh, rd.s.cfg.ScrapeInterval) + rd.lagAllowance(e)
}
