package promql

import (
	"fmt"
	"math"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// countedLabel is the model row's label that says, while some of its
// replicas have stopped, how many its summed figures count.
const countedLabel = telemetry.LabelReplicasCounted

// A model row's value is the server's aggregation over its replicas'
// series, and a rate over [W] still counts a stopped replica's older
// samples for up to W (QA: 167 tok/s for a model whose one live replica
// did 117). Where the figure is a sum over series, the row takes the sum
// of the replicas that have not stopped instead; ratios, maxima and means
// stay the server's.

// leavesOutStopped reports whether e's value of sig is to be summed from
// its replicas that have not stopped: e is a model row with a stopped
// replica and sig a sum.
func (rd *round) leavesOutStopped(e *endpointState, sig telemetry.Signal) bool {
	if len(e.members) == 0 || !rd.summed(e, sig) {
		return false
	}
	for _, m := range e.members {
		if rd.stopped(m) {
			return true
		}
	}
	return false
}

// summed reports whether sig's value for e's family is a sum over its
// series (rates and gauges summed, without offset), so that a model's is
// the sum of its replicas'. A configured query is the user's: not known.
func (rd *round) summed(e *endpointState, sig telemetry.Signal) bool {
	if _, custom := rd.s.cfg.Queries[sig]; custom {
		return false
	}
	f := rd.reg.parser.fams[e.family]
	if f == nil {
		return false
	}
	n := 0
	for _, a := range f.spec.Signals[sig] {
		switch {
		case a.Type == engines.Histogram:
			continue // windows, not a value
		case a.Offset != 0:
			return false
		case a.Type == engines.HistogramSum,
			(a.Type == engines.Counter || a.Type == engines.Gauge) && a.Agg == engines.Sum:
			n++
		default:
			return false
		}
	}
	return n > 0
}

// liveSum is a value of sig for a model row left for its replicas:
// evaluated at eval, approximate or rated as the server's series said.
type liveSum struct {
	eval          time.Time
	approx, rated bool
}

// sumLive emits e's value of sig as the sum of the values of its replicas
// that have not stopped, from the same answer (values: per replica); no
// data when none of them had one.
func (rd *round) sumLive(e *endpointState, sig telemetry.Signal, p liveSum, values map[*endpointState]float64) {
	sum, n := 0.0, 0
	for _, m := range e.members {
		if v, ok := values[m]; ok && !rd.stopped(m) {
			sum += v
			n++
		}
	}
	if n == 0 {
		rd.add(rd.noValue(e, sig, p.eval))
		return
	}
	rd.value(e, sig, p.eval, sum, p.approx, p.rated)
}

// noteCounted labels each model row with how many of its replicas its
// summed figures count while some have stopped, and takes the label off
// once none has: announced only when it changes.
func (rd *round) noteCounted() {
	for _, e := range rd.reg.all() {
		if len(e.members) == 0 {
			continue
		}
		stopped := 0
		for _, m := range e.members {
			if rd.stopped(m) {
				stopped++
			}
		}
		note := ""
		if stopped > 0 {
			note = fmt.Sprintf("%d of %d replicas: %d stopped, left out of its summed figures", len(e.members)-stopped, len(e.members), stopped)
		}
		rd.reg.setLabel(e, countedLabel, note)
	}
}

// finite reports whether v is a number a figure can hold.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
