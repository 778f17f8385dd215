package promql

import (
	"strings"
	"time"
)

// Young series. rate(x[W]) divides by the whole window W, so a series
// younger than W reads low (an engine up for 15 s shows 1/20 of its output
// tok/s over 5 m). The range answers tell a series' age for free: when an
// endpoint's first point comes after the range's start, its series began
// there (within a step). Rates of such endpoints carry SeriesAge until the
// series is older than the rate window, so views mark them rather than
// show a silently low number.

// On VictoriaMetrics rate() divides by the span the samples cover when no
// sample precedes the window: a young series' rate is its true rate, and
// nothing is marked. The store's kind shows in its evaluation times:
// VictoriaMetrics answers instant queries at whole seconds, Prometheus
// (and the stores built on its engine: Thanos, Mimir) at milliseconds.

// rateKind tells, from the evaluation times seen, whether the store's
// rate() divides by the whole window.
type rateKind struct {
	wholeSeconds int       // distinct evaluation times at a whole second
	last         time.Time // the last evaluation time seen
	subSecond    bool      // an evaluation with milliseconds: Prometheus' engine
}

// wholeSecondEvidence is how many distinct evaluation times, all at whole
// seconds, make the store VictoriaMetrics: by chance, one in 1000³ for
// Prometheus. Only distinct times count: one refresh's answers are
// evaluated concurrently, often in the same millisecond, and equal times
// are one chance of 1000, not three.
const wholeSecondEvidence = 3

func (k *rateKind) observe(eval time.Time) {
	if !wholeSecond(eval) {
		k.subSecond = true
		return
	}
	if eval.Equal(k.last) {
		return
	}
	k.last = eval
	k.wholeSeconds++
}

// wholeSecond reports whether t has no milliseconds: VictoriaMetrics'
// evaluation times always, Prometheus' one in 1000.
func wholeSecond(t time.Time) bool { return t.UnixMilli()%1000 == 0 }

// dividesByWindow reports whether a young series' rate over [W] reads low
// (Prometheus' engine), the default until the evaluations have said.
func (k rateKind) dividesByWindow() bool {
	return k.subSecond || k.wholeSeconds < wholeSecondEvidence
}

// seriesBirth is what the range answers said about one endpoint's series:
// its earliest point, and the earliest start of a range asked. When the
// earliest point comes after that start, the range found nothing before
// it: the series began there.
type seriesBirth struct {
	since, asked time.Time // server times
}

func (x seriesBirth) born() bool { return x.since.After(x.asked) }

// ageBook holds the births of the endpoints' series, by endpoint name.
type ageBook map[string]seriesBirth

// note records a range answer that started at start and whose earliest
// point for the endpoint is at first.
func (b ageBook) note(endpoint string, start, first time.Time) {
	x, ok := b[endpoint]
	if !ok {
		b[endpoint] = seriesBirth{since: first, asked: start}
		return
	}
	if first.Before(x.since) {
		x.since = first
	}
	if start.Before(x.asked) {
		x.asked = start
	}
	b[endpoint] = x
}

// restarted records that the endpoint's series began again at at (server
// time), after a stop: its rates over [W] span the gap and read low until
// W has passed, as a new series' do.
func (b ageBook) restarted(endpoint string, at time.Time) {
	b[endpoint] = seriesBirth{since: at, asked: at.Add(-time.Nanosecond)}
}

// youngFor returns how old the endpoint's series is at serverNow when it
// is younger than window; ok is false when it is older, or unknown.
func (b ageBook) youngFor(endpoint string, serverNow time.Time, window time.Duration) (time.Duration, bool) {
	x, ok := b[endpoint]
	if !ok || !x.born() {
		return 0, false
	}
	age := max(serverNow.Sub(x.since), time.Millisecond) // set, however young
	if age >= window {
		return 0, false
	}
	return age, true
}

// ratedOverWindow reports whether a gauge template takes a rate over the
// window W, which a young series makes read low.
func ratedOverWindow(tmpl string) bool { return strings.Contains(tmpl, "[W]") }
