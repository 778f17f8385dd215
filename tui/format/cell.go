package format

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Kind says how far a shown figure can be trusted; it picks the paint and
// is always backed by words in the text (never colour alone).
type Kind uint8

const (
	Live    Kind = iota // fresh figure
	Stale               // old figure: dimmed, with its age
	Error               // source failed
	NoData              // source answered with nothing
	Unknown             // never observed
	OK                  // healthy state word
	Warn                // pending state word
)

// Cell is one displayed figure.
type Cell struct {
	Text string
	Kind Kind
}

// NoDataText is shown when a source answered with nothing; never "0".
const NoDataText = "no data"

// Signal formats s for a cell at most width wide: text is the live figure
// (already formatted; "" when the snapshot holds no number). ok is false
// when the signal is absent from the snapshot. unknown is the glyph for
// never-observed figures.
func Signal(s telemetry.SignalSnapshot, ok bool, text string, now time.Time, width int, unknown string) Cell {
	if !ok {
		return Cell{unknown, Unknown}
	}
	if text != "" && s.Approx {
		text = "~" + text
	}
	if text != "" && s.Young {
		text += YoungMark // a rate over a series younger than its window reads low
	}
	switch s.State {
	case telemetry.Unknown:
		return Cell{unknown, Unknown}
	case telemetry.NoData:
		return Cell{NoDataText, NoData}
	case telemetry.Error:
		// The reason and the last good value are in the detail view and
		// the status line; a table cell only has room to say it failed.
		return Cell{"ERROR", Error}
	case telemetry.Stale:
		age := figures.Age(s.Age(now))
		for _, c := range []string{text + " " + age + " ago", "STALE " + age, "STALE"} {
			if c[0] != ' ' && ansi.StringWidth(c) <= width {
				return Cell{c, Stale}
			}
		}
		return Cell{"STALE", Stale}
	}
	if text == "" {
		return Cell{NoDataText, NoData}
	}
	return Cell{text, Live}
}

// Pair formats the p50/p99 of a distribution snapshot: "45ms/120ms",
// "≤300ms/≤300ms" where they are only bucket bounds (see Quantile).
func Pair(s telemetry.SignalSnapshot) string {
	if s.P50 == nil || s.P99 == nil {
		return ""
	}
	return Quantile(*s.P50, s.P50Bound, s.Unit) + "/" + Quantile(*s.P99, s.P99Bound, s.Unit)
}

// Quantile formats a shown quantile with its bound: "≤300ms" where the
// rank falls in the lowest bucket (histogram_quantile would interpolate
// from an assumed 0 and say 150ms), "≥7.68s" where it falls in +Inf,
// "42ms" otherwise.
func Quantile(v float64, b telemetry.Bound, unit string) string {
	return b.Mark() + figures.Value(v, unit)
}

// Percentiles formats the percentiles ps (50, 90, 95, 99, ascending) of a
// distribution snapshot: "p50 12ms p95 40ms p99 80ms". Neighbours that are
// the same bucket bound read once ("p50–p99 ≤300ms", "p95–p99 ≥5s"), and
// when any is a bound the histogram's mean follows where it is known
// ("mean 3.9ms"): the one exact figure such a histogram gives. "" when any
// is unknown.
func Percentiles(s telemetry.SignalSnapshot, ps ...int) string {
	parts := make([]string, 0, len(ps)+1)
	bounded := false
	for i := 0; i < len(ps); {
		v, b := s.Percentile(ps[i])
		if v == nil {
			return ""
		}
		j := i + 1
		for b != telemetry.NotBound && j < len(ps) {
			if w, c := s.Percentile(ps[j]); w == nil || c != b || *w != *v {
				break
			}
			j++
		}
		label := "p" + strconv.Itoa(ps[i])
		if j-1 > i {
			label += "–p" + strconv.Itoa(ps[j-1])
		}
		parts = append(parts, label+" "+Quantile(*v, b, s.Unit))
		bounded = bounded || b != telemetry.NotBound
		i = j
	}
	if bounded && s.Mean != nil {
		parts = append(parts, "mean "+figures.Value(*s.Mean, s.Unit))
	}
	return strings.Join(parts, " ")
}

// YoungMark follows a counter's rate over a series younger than the rate's
// window: the true rate is higher than shown (telemetry.ReadsLowWhenYoung
// decides which figures can carry it).
const YoungMark = "+"

// Coverage says how much data a window holds when the data begin inside
// it ("8m of data"); "" when the window is full.
func Coverage(s telemetry.SignalSnapshot, now time.Time) string {
	if s.DataSince.IsZero() {
		return ""
	}
	return figures.Age(now.Sub(s.DataSince)) + " of data"
}

// Young explains a young rate ("series 15s old, rate reads low"); "" when
// the rate is not young.
func Young(s telemetry.SignalSnapshot) string {
	if !s.Young {
		return ""
	}
	return "series " + figures.Age(time.Duration(s.SeriesAgeS*float64(time.Second))) + " old: rate reads low"
}

// RateWindow names the span a rate or ratio is taken over when that is
// not the viewed window: "over 5m, PromQL window" (its rate() range),
// "over 1s, scrape window"; "" when the snapshot names none.
func RateWindow(s telemetry.SignalSnapshot) string {
	d, what, ok := s.RateWindow()
	if !ok {
		return ""
	}
	return "over " + figures.Window(d) + ", " + what
}

// Scalar formats the value of a gauge snapshot.
func Scalar(s telemetry.SignalSnapshot) string {
	if s.Value == nil {
		return ""
	}
	return figures.Value(*s.Value, s.Unit)
}

// BadgeKind maps an SLO badge to its paint.
func BadgeKind(b slo.Badge) Kind {
	switch b {
	case slo.BadgeOK:
		return OK
	case slo.BadgePending:
		return Warn
	case slo.BadgeBreach, slo.BadgeError:
		return Error
	case slo.BadgeStale:
		return Stale
	case slo.BadgeNoData:
		return NoData
	}
	return Unknown
}

// BadgeRank orders badges worst first, for sorting.
func BadgeRank(b slo.Badge) int {
	switch b {
	case slo.BadgeBreach:
		return 0
	case slo.BadgeError:
		return 1
	case slo.BadgePending:
		return 2
	case slo.BadgeStale:
		return 3
	case slo.BadgeNoData:
		return 4
	case slo.BadgeOK:
		return 5
	}
	return 6
}

// StateWord names a telemetry state for people.
func StateWord(s telemetry.State) string {
	switch s {
	case telemetry.Live:
		return "ok"
	case telemetry.Stale:
		return "STALE"
	case telemetry.NoData:
		return "NO DATA"
	case telemetry.Error:
		return "ERROR"
	}
	return "unknown"
}

// RestartedMark follows the name of an endpoint its source saw restart a
// short while ago (telemetry.LabelRestarted): its rates started afresh.
const RestartedMark = "RESTARTED"

// Restarted says when and how the endpoint restarted ("RESTARTED 2m ago
// (counter reset): rates started afresh"); "" when it is not marked.
func Restarted(ep telemetry.Endpoint, now time.Time) string {
	at, how, ok := ep.Restarted()
	if !ok {
		return ""
	}
	return RestartedMark + " " + figures.Age(now.Sub(at)) + " ago (" + how + "): rates started afresh"
}

// TargetKind is how a down or gone target's word is painted: down as an
// error, gone as stale (the store forgot it; it leaves after the window).
func TargetKind(state string) Kind {
	if state == telemetry.TargetGone {
		return Stale
	}
	return Error
}
