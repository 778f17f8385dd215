package scrape

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// state is what a scraper keeps between scrapes.
type state struct {
	gen          uint64
	families     int       // families on the last page (parser size hint)
	observations int       // observations of the last scrape (buffer size hint)
	prevAt       time.Time // time of the last successful scrape
	now          time.Time // time of the scrape in progress
	rateWindow   time.Duration
	fams         map[string]map[string]*prevSeries
	endpoints    map[string]bool
	failures     int
	lastOK       time.Time
	// noPage: an implied scrape found no metrics page from the start
	// (absent.go); said once, not fetched again.
	noPage bool
	// restartedAt is when the engine last restarted (a counter went
	// back, or a new process start), restartedHow how it was seen: its
	// endpoints are labelled restarted for a while.
	restartedAt  time.Time
	restartedHow string
	// processStart is the last process start seen (processstart.go);
	// newProcess says this scrape's page has a new one: every counter
	// and histogram starts afresh.
	processStart float64
	newProcess   bool
	downSince    time.Time // first failed scrape after one that worked (target.go)
	engine       telemetry.Engine
	info         modelInfo
	// never is what the engine of neverOf can never give (each endpoint's
	// announcement says it), kept while the engine stays the same.
	never   map[telemetry.Signal]string
	neverOf telemetry.Engine
	// the last detection and the hash of the names it was made from
	det      engines.Detection
	detSum   uint64
	detValid bool
}

func newState(rateWindow time.Duration) state {
	return state{fams: map[string]map[string]*prevSeries{}, endpoints: map[string]bool{}, rateWindow: rateWindow}
}

// RateWindow is the span direct-scrape rates and ratios are taken over for
// a scrape interval: the scrapes of the last max(10 s, 4 intervals), as a
// Prometheus rate() over several samples, so one scrape's burst or lull
// does not make the figure jump.
func RateWindow(interval time.Duration) time.Duration {
	return max(10*time.Second, 4*interval)
}

func (st *state) endpointNames() []string {
	out := make([]string, 0, len(st.endpoints))
	for n := range st.endpoints {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// deltaStatus says how a series' increment since the last scrape may be
// used.
type deltaStatus uint8

const (
	deltaOK    deltaStatus = iota
	deltaNew               // first sight (or after NaN): baseline only
	deltaReset             // restart: the interval is skipped
	deltaNaN               // the current value is NaN: no data
)

// prevSeries is one series' previous reading.
type prevSeries struct {
	gen     uint64
	created float64
	value   float64 // counter value
	sum     float64 // histogram sum
	buckets []telemetry.Bucket
	valid   bool
	// cached result of this generation, when a family is read twice
	status deltaStatus
	delta  float64
	// A counter's readings over the rate window (counterPoint), the values
	// lost to resets so far, and the increase and span they give.
	points  []counterPoint
	lost    float64
	winInc  float64
	winSpan time.Duration
	// before and sumBefore are a histogram's previous reading while this
	// generation's increment is in use, so a series read again (its model,
	// then its rank) adds the same increment.
	before    []telemetry.Bucket
	sumBefore float64
}

// counterPoint is one reading of a counter: total is its value plus what
// resets before it took away, so totals never decrease.
type counterPoint struct {
	at    time.Time
	total float64
}

func (st *state) series(fam string, ser *expo.Series) (p *prevSeries, fresh bool) {
	m := st.fams[fam]
	if m == nil {
		m = map[string]*prevSeries{}
		st.fams[fam] = m
	}
	if p = m[ser.Key]; p == nil {
		p = &prevSeries{}
		m[strings.Clone(ser.Key)] = p
		return p, true
	}
	return p, false
}

// counterWentBack records a restart seen by a counter reset, unless this
// scrape's new process start has dated it already.
func (st *state) counterWentBack() {
	if !st.newProcess {
		st.restartedAt, st.restartedHow = st.now, counterReset
	}
}

// restarted reports a changed _created timestamp.
func restarted(prevCreated, created float64) bool {
	return prevCreated != 0 && created != 0 && prevCreated != created
}

// counterDelta returns the increment of a counter series (value v) since
// the previous scrape; computed once per scrape and cached.
func (st *state) counterDelta(fam string, ser *expo.Series, v float64) (float64, deltaStatus) {
	p := st.counter(fam, ser, v)
	return p.delta, p.status
}

// counterIncrease returns a counter series' increase over the rate window
// and the span it covers (from its oldest reading kept to now); ok is false
// before a second reading. As Prometheus' rate(), a reset (the value goes
// down, or _created changes) counts the new value from zero.
func (st *state) counterIncrease(fam string, ser *expo.Series, v float64) (inc float64, span time.Duration, status deltaStatus) {
	p := st.counter(fam, ser, v)
	switch {
	case p.status == deltaNaN:
		return 0, 0, deltaNaN
	case len(p.points) < 2:
		return 0, 0, deltaNew
	}
	return p.winInc, p.winSpan, deltaOK
}

// counter updates a counter series' state with this scrape's value once
// per scrape and returns it.
func (st *state) counter(fam string, ser *expo.Series, v float64) *prevSeries {
	p, fresh := st.series(fam, ser)
	if !fresh && p.gen == st.gen {
		return p
	}
	p.gen = st.gen
	p.delta = 0
	switch {
	case math.IsNaN(v):
		p.status, p.valid = deltaNaN, false
		p.points, p.lost = p.points[:0], 0
		return p
	case fresh || !p.valid:
		p.status, p.valid = deltaNew, true
		p.points, p.lost = p.points[:0], 0
	case v < p.value || restarted(p.created, ser.Created) || st.newProcess:
		// The engine restarted: the rate window starts afresh from this
		// reading, so that rates never average the old life, the gap and
		// the new one (the first rate comes with the next scrape).
		p.status = deltaReset
		p.points, p.lost = p.points[:0], 0
		st.counterWentBack()
	default:
		p.status, p.delta = deltaOK, v-p.value
	}
	p.value, p.created = v, ser.Created
	p.points = append(p.points, counterPoint{at: st.now, total: v + p.lost})
	p.points = trimWindow(p.points, st.now.Add(-st.rateWindow))
	first, last := p.points[0], p.points[len(p.points)-1]
	p.winInc, p.winSpan = last.total-first.total, last.at.Sub(first.at)
	return p
}

// trimWindow drops the readings before the last one at or before from, so
// the oldest kept one starts a span of at least the window once the
// series is that old.
func trimWindow(pts []counterPoint, from time.Time) []counterPoint {
	base := 0
	for i, pt := range pts {
		if pt.at.After(from) {
			break
		}
		base = i
	}
	if base == 0 {
		return pts
	}
	n := copy(pts, pts[base:])
	return pts[:n]
}

// histDelta adds a histogram series' bucket increments to acc.
func (st *state) histDelta(fam string, ser *expo.Series, scale float64, acc *histAcc) {
	p, fresh := st.series(fam, ser)
	if !fresh && p.gen == st.gen {
		if p.status == deltaOK {
			acc.add(p.before, ser.Buckets, ser.Sum-p.sumBefore, scale)
		}
		acc.note(p.status)
		return
	}
	p.gen = st.gen
	cur := ser.Buckets
	nan := math.IsNaN(ser.Sum)
	for _, b := range cur {
		if math.IsNaN(b.Count) {
			nan = true
			break
		}
	}
	switch {
	case nan:
		p.status, p.valid = deltaNaN, false
	case fresh || !p.valid:
		p.status, p.valid = deltaNew, true
	case !sameBounds(p.buckets, cur) || restarted(p.created, ser.Created) || decreased(p.buckets, cur) || st.newProcess:
		p.status = deltaReset
		if sameBounds(p.buckets, cur) {
			st.counterWentBack()
		}
	default:
		p.status = deltaOK
		p.before, p.buckets, p.sumBefore = p.buckets, p.before, p.sum
		acc.add(p.before, cur, ser.Sum-p.sumBefore, scale)
	}
	acc.note(p.status)
	if !nan {
		p.buckets = append(p.buckets[:0], cur...)
		p.sum, p.created = ser.Sum, ser.Created
	}
}

func sameBounds(a, b []telemetry.Bucket) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UpperBound != b[i].UpperBound {
			return false
		}
	}
	return true
}

func decreased(prev, cur []telemetry.Bucket) bool {
	for i := range cur {
		if cur[i].Count < prev[i].Count {
			return true
		}
	}
	return false
}

// sweep forgets series not seen in the current scrape.
func (st *state) sweep() {
	for fam, m := range st.fams {
		for k, p := range m {
			if p.gen != st.gen {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(st.fams, fam)
		}
	}
}
