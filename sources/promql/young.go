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
// it: the series began there. A restart (restarted) sets both, and
// before, the newest sample of the life before.
type seriesBirth struct {
	since, asked time.Time // server times
	before       time.Time // a restart's: the newest sample before it
	// gone: the endpoint was retired; its next range answer is a new life.
	gone bool
	// raw: dated by raw series (histogram buckets), not by a rate over
	// [W], which answers for W after a life's last sample and so dates
	// a series restarted less than W ago by its life before.
	raw bool
}

func (x seriesBirth) born() bool { return x.since.After(x.asked) }

// ageBook holds the births of the endpoints' series, by endpoint name.
type ageBook map[string]seriesBirth

// note records a range answer that started at start and whose earliest
// point for the endpoint is at first; raw says the answer is of raw
// series (histogram buckets), else of a rate over [W]. Raw answers, where
// there are any, date the series alone.
func (b ageBook) note(endpoint string, start, first time.Time, raw bool) {
	x, ok := b[endpoint]
	if x.raw && !raw {
		return
	}
	if !ok || x.gone || raw && !x.raw && x.before.IsZero() {
		b[endpoint] = seriesBirth{since: first, asked: start, raw: raw}
		return
	}
	if first.Before(x.since) && x.before.IsZero() { // a restart dates its own life
		x.since = first
	}
	if start.Before(x.asked) {
		x.asked = start
	}
	b[endpoint] = x
}

// restarted records that the endpoint's series began again at at (server
// time), their newest sample before that at before: a restart seen as a
// counter reset or a return after a stop. Its rates start afresh there
// (afreshRate) and read low until W has passed, as a new series' do.
func (b ageBook) restarted(endpoint string, at, before time.Time) {
	b[endpoint] = seriesBirth{since: at, asked: at.Add(-time.Nanosecond), before: before, raw: b[endpoint].raw}
}

// retired records that the endpoint was forgotten (retireGone), its newest
// sample at last: if its series come back, they are a new life.
func (b ageBook) retired(endpoint string, last time.Time) {
	b[endpoint] = seriesBirth{gone: true, before: last}
}

// goneBefore returns, for an endpoint retired, its newest sample then.
func (b ageBook) goneBefore(endpoint string) (time.Time, bool) {
	x, ok := b[endpoint]
	return x.before, ok && x.gone
}

// youngFor returns how old the endpoint's series is at serverNow when its
// rates over window read low; ok is false when they do not, or it is
// unknown. divides says the store's rate() divides by the whole window
// (rateKind): then a series younger than window reads low. On any store
// a restart does while a sample before it is in the window: afreshRate
// then takes the counter's value over the whole window.
func (b ageBook) youngFor(endpoint string, serverNow time.Time, window time.Duration, divides bool) (time.Duration, bool) {
	x, ok := b[endpoint]
	if !ok || x.gone || !x.born() {
		return 0, false
	}
	age := max(serverNow.Sub(x.since), time.Millisecond) // set, however young
	afresh := !x.before.IsZero() && serverNow.Sub(x.before) < window
	if age >= window || !divides && !afresh {
		return 0, false
	}
	return age, true
}

// restartedAt returns when the endpoint's series last began again, when
// they did (a counter reset or a return after a stop).
func (b ageBook) restartedAt(endpoint string) (time.Time, bool) {
	x, ok := b[endpoint]
	if !ok || x.gone || x.before.IsZero() {
		return time.Time{}, false
	}
	return x.since, true
}

// ratedOverWindow reports whether a gauge template takes a rate over the
// window W, which a young series makes read low.
func ratedOverWindow(tmpl string) bool { return strings.Contains(tmpl, "[W]") }
