package promql

import (
	"math"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/telemetry"
)

// History of value signals (gauges and rates: output tok/s, KV %,
// running requests…). Live, each is one instant query a refresh; while a
// window is viewed (WindowChanged), the window behind the first live
// value is filled by the same query
// as a range query, planned as the histograms' history is (backfill.go:
// one query per signal and chunk, step R_b within historyPointBudget):
// each point is the value Prometheus' query_range gives at that step,
// emitted as a History sample, so charts cover the window. The answers
// also date each series' birth (young.go), which marks the rates of
// engines without histograms (llama.cpp) when they are younger than
// their rate window. GPU series joined per host or pod (gpu.go) are not
// backfilled: they name no endpoint.

// valueHistory is what persists about value signals' history.
type valueHistory struct {
	liveFrom map[cumKey]time.Time // server time of the first live value
	asked    map[cumKey]time.Time // how far back history was asked for
	retry    map[telemetry.Signal]time.Time
	gen      map[telemetry.Signal]int64
}

func newValueHistory() valueHistory {
	return valueHistory{liveFrom: map[cumKey]time.Time{}, asked: map[cumKey]time.Time{},
		retry: map[telemetry.Signal]time.Time{}, gen: map[telemetry.Signal]int64{}}
}

// valueDue reports whether sig's history may be asked this round.
func (rd *round) valueDue(sig telemetry.Signal) bool {
	vh := &rd.s.state.values
	return !rd.began.Before(vh.retry[sig]) || rd.s.viewGen.Load() != vh.gen[sig]
}

// noteLive records, from this round's instant answer of sig, the first
// live value of each endpoint (where its history must end).
func (rd *round) noteLive(a answer) {
	vh := &rd.s.state.values
	vec, ok := a.value.(model.Vector)
	if !ok || a.err != nil {
		return
	}
	for _, smp := range vec {
		eval := rd.s.localEval(smp.Timestamp.Time())
		for _, e := range rd.reg.resolve(smp.Metric, false) {
			key := cumKey{e.info.Name, a.signal}
			if _, ok := vh.liveFrom[key]; !ok {
				vh.liveFrom[key] = rd.s.state.offset.toServer(valueAt(e, eval)) // as value dates it
			}
		}
	}
}

// valueHistoryJobs plans the backfill of every value signal whose
// endpoints' history does not reach the viewed window's start; live are
// the round's instant answers, not yet mapped.
func (rd *round) valueHistoryJobs(live []answer) []historyPlan {
	s, st := rd.s, &rd.s.state
	if s.view.Load() <= 0 {
		return nil // no window on screen (snapshot, export): live values only
	}
	vh := &st.values
	R := s.cfg.HistogramStep
	from := rd.lag.end.Add(-s.viewWindow())
	var plans []historyPlan
	for _, a := range live {
		sig := a.signal
		vec, ok := a.value.(model.Vector)
		if a.kind != instantJob || len(st.queries.value[sig]) == 0 || !ok || a.err != nil || len(vec) == 0 || !rd.valueDue(sig) {
			continue // not a value signal (freshness, KV capacity), or nothing to backfill
		}
		rd.noteLive(a)
		var upTo time.Time
		for key, t := range vh.liveFrom {
			if key.signal != sig {
				continue
			}
			if at, ok := vh.asked[key]; ok && at.Before(t) {
				t = at
			}
			if t.After(from.Add(R)) && t.After(upTo) {
				upTo = t
			}
		}
		if upTo.IsZero() {
			vh.retry[sig], vh.gen[sig] = rd.began.Add(s.cfg.DiscoveryInterval), s.viewGen.Load()
			continue
		}
		step := historyStep(upTo.Sub(from), R, len(vec))
		p := historyPlan{signal: sig, start: alignDown(from, R), step: step, values: true, first: map[string]time.Time{}}
		p.end = p.start.Add((upTo.Sub(p.start) - 1) / step * step)
		rd.chunk(&p, len(vec), st.queries.value[sig])
		vh.retry[sig], vh.gen[sig] = rd.began.Add(s.cfg.DiscoveryInterval), s.viewGen.Load()
		plans = append(plans, p)
	}
	return plans
}

// valueHistoryDone dates the series' births from a value signal's
// backfill, fetched whole: what the answers found, or did not.
func (rd *round) valueHistoryDone(p historyPlan) {
	st := &rd.s.state
	for key := range st.values.liveFrom {
		if key.signal != p.signal {
			continue
		}
		if t, ok := p.first[key.endpoint]; ok {
			st.ages.note(key.endpoint, p.start, t, false)
		}
	}
	if st.hist.from.IsZero() || p.start.Before(st.hist.from) {
		st.hist.from = p.start
		st.hist.step = p.step
	}
}

// valueChunk emits one chunk's points as History samples, each endpoint's
// only before what it holds already (its live values, or history asked
// before). It returns false when the chunk failed.
func (rd *round) valueChunk(p *historyPlan, a answer) bool {
	vh := &rd.s.state.values
	sig, first := p.signal, p.first
	mat, ok := rd.historyMatrix(p, a)
	if !ok {
		return false
	}
	for _, ss := range mat {
		approx := ss.Metric[derivedTag] != "" || ss.Metric[meanTag] != ""
		for _, e := range rd.reg.knownValue(ss.Metric) {
			key := cumKey{e.info.Name, sig}
			upTo, live := vh.liveFrom[key]
			if !live {
				continue // not live yet: its turn comes once it is
			}
			if at, ok := vh.asked[key]; ok && at.Before(upTo) {
				upTo = at
			}
			if len(ss.Values) == 0 {
				continue
			}
			if t, ok := first[e.info.Name]; !ok || ss.Values[0].Timestamp.Time().Before(t) {
				first[e.info.Name] = ss.Values[0].Timestamp.Time() // points come in time order
			}
			interval := rd.valueInterval(e)
			for _, sp := range ss.Values {
				t := sp.Timestamp.Time()
				v := float64(sp.Value)
				if !t.Before(upTo) {
					break
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				rd.add(telemetry.Observation{Kind: telemetry.KindSample, At: rd.s.localEval(t), Endpoint: e.info.Name,
					Signal: sig, Value: v, Approx: approx, Interval: interval, History: true})
			}
		}
	}
	// What was asked is held: a later plan (the window widened) asks
	// only for what lies before it.
	start := a.rng.Start
	for key := range vh.liveFrom {
		if at, ok := vh.asked[key]; key.signal == sig && (!ok || start.Before(at)) {
			vh.asked[key] = start
		}
	}
	return true
}

// knownValue returns the endpoint a value series applies to without
// creating one, as resolve does without fan-in: a replica's series its
// replica, a series without replica labels its model row.
func (r *registry) knownValue(m model.Metric) []*endpointState {
	id := r.parser.parse(m)
	if id.join() {
		return nil
	}
	key := id.aggregateKey()
	if id.replicaKey != "" {
		key += "\x01" + id.replicaKey
	}
	if e, ok := r.byKey[key]; ok {
		return []*endpointState{e}
	}
	return nil
}
