package slo

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/ttftop/ttftop/figures"
	"github.com/ttftop/ttftop/telemetry"
)

// Defaults of an objective's optional fields.
const (
	DefaultPercentile = 0.95
	DefaultWindow     = 5 * time.Minute
	DefaultPeriod     = 28 * 24 * time.Hour
	DefaultSeverity   = "warning"
	// An endpoint that fails more than half its probes over a minute is
	// down: at any probe interval up to 30 s that is FIRING within 60 s of
	// the first failure (2 s: 16 failures, 32 s; 10 s: 4, ~40 s; 15 s: 3,
	// ~45 s), while a single failed probe among healthy ones is not.
	DefaultAvailabilityTarget = 0.5
	DefaultAvailabilityWindow = time.Minute
)

// DefaultTargetUpFor is how long a target must be down before its
// target_up alert fires: the usual `up == 0` rule's `for: 1m`.
const DefaultTargetUpFor = time.Minute

// workbookPeriod is the period the SRE workbook's burn windows were chosen
// for (Table 5-8: 30 days); other periods scale them proportionally.
const workbookPeriod = 30 * 24 * time.Hour

// WorkbookBurnWindows returns the SRE workbook's multiwindow,
// multi-burn-rate rules (Table 5-8): 14.4× over 1 h and 5 m, 6× over 6 h
// and 30 m (page), 1× over 3 d and 6 h (ticket). The windows are the
// workbook's own for any period of at least 3 days (28 d, 30 d, 90 d), so
// alert and exporter labels read 5m, 30m, 1h, 6h, 3d as the rules people
// copy do. Only a period shorter than the longest window gets the windows
// scaled down from 30 days to fit (the factors stay, so each pair still
// spends the same share of the budget before it fires).
func WorkbookBurnWindows(period time.Duration) []BurnWindow {
	f := 1.0
	if period < 72*time.Hour {
		f = float64(period) / float64(workbookPeriod)
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(math.Round(float64(d) * f)) }
	return []BurnWindow{
		{Factor: 14.4, Long: scale(time.Hour), Short: scale(5 * time.Minute), Severity: "page"},
		{Factor: 6, Long: scale(6 * time.Hour), Short: scale(30 * time.Minute), Severity: "page"},
		{Factor: 1, Long: scale(72 * time.Hour), Short: scale(6 * time.Hour), Severity: "ticket"},
	}
}

// DefaultObjectives are the defaults, for every endpoint: TTFT p95
// below 5 s and TPOT p95 below 50 ms over 5 minutes. Both are exact vLLM
// histogram bucket edges, so scraped figures need no interpolation at the
// threshold. For 1 m rides out a single slow probe; KeepFiringFor 2 m stops
// a borderline p95 from paging on every crossing.
func DefaultObjectives() []Objective {
	return []Objective{
		{Name: "ttft-p95", Kind: Percentile, Signal: telemetry.TTFT, Percentile: 0.95, Threshold: 5,
			Window: DefaultWindow, For: time.Minute, KeepFiringFor: 2 * time.Minute},
		{Name: "tpot-p95", Kind: Percentile, Signal: telemetry.TPOT, Percentile: 0.95, Threshold: 0.050,
			Window: DefaultWindow, For: time.Minute, KeepFiringFor: 2 * time.Minute},
	}
}

// AvailabilityObjective is the objective every probed endpoint gets unless
// the user configures their own or turns it off.
func AvailabilityObjective() Objective {
	return Objective{Name: "availability", Kind: Availability, Target: DefaultAvailabilityTarget,
		Window: DefaultAvailabilityWindow, Severity: "page"}
}

// TargetUpObjective is the objective every endpoint whose target health
// is known (scraped, or a replica in the store) gets unless the user
// configures their own or turns availability off: a target down for a
// minute pages; a model row with some replicas down warns, with none up
// pages.
func TargetUpObjective() Objective {
	return Objective{Name: "target-up", Kind: TargetUp, For: DefaultTargetUpFor, Severity: "page"}
}

// WithDefaults returns o with its optional fields filled: percentile,
// window, period, burn windows (scaled to the period), severity and a name
// derived from what it promises.
func (o Objective) WithDefaults() Objective {
	switch o.Kind {
	case Percentile:
		if o.Percentile == 0 {
			o.Percentile = DefaultPercentile
		}
		if o.Window == 0 {
			o.Window = DefaultWindow
		}
	case ErrorRate:
		if o.Window == 0 {
			o.Window = DefaultWindow
		}
		if o.Signal == "" {
			o.Signal = telemetry.ErrorRate
		}
	case Availability:
		if o.Window == 0 {
			o.Window = DefaultAvailabilityWindow
		}
		if o.Target == 0 {
			o.Target = DefaultAvailabilityTarget
		}
		// Judged as the probes' error rate against the failures allowed.
		o.Signal, o.Threshold = telemetry.ErrorRate, budgetOf(o.Target)
	case TargetUp:
		// Judged on the share of up targets: below all of them breaches.
		o.Signal, o.Threshold = telemetry.TargetUp, 1
		if o.Severity == "" {
			o.Severity = "page"
		}
	case Ratio:
		if o.Period == 0 {
			o.Period = DefaultPeriod
		}
		if o.BurnWindows == nil {
			o.BurnWindows = WorkbookBurnWindows(o.Period)
		}
		bw := make([]BurnWindow, len(o.BurnWindows))
		copy(bw, o.BurnWindows)
		for i := range bw {
			if bw[i].Severity == "" {
				bw[i].Severity = "ticket"
				if bw[i].Factor >= 6 {
					bw[i].Severity = "page"
				}
			}
		}
		o.BurnWindows = bw
	}
	if o.Severity == "" {
		o.Severity = DefaultSeverity
	}
	if o.Name == "" {
		o.Name = o.defaultName()
	}
	return o
}

// HasDerivedName reports whether o has no name or the one WithDefaults
// derives from what it promises: such a name follows a change of threshold
// or percentile, a name the user chose does not.
func (o Objective) HasDerivedName() bool {
	return o.Name == "" || o.Name == o.WithDefaults().defaultName()
}

func (o Objective) defaultName() string {
	switch o.Kind {
	case Percentile:
		return fmt.Sprintf("%s-p%s", o.Signal, trimFloat(o.Percentile*100))
	case Ratio:
		return fmt.Sprintf("%s-ratio-%s", o.Signal, trimFloat(o.Target*100))
	case ErrorRate:
		return "error-rate"
	case Availability:
		return "availability"
	case TargetUp:
		return "target-up"
	}
	return string(o.Signal)
}

// valueUnit is the base unit of o's alert values (Alert.Unit).
func (o Objective) valueUnit() string {
	switch o.Kind {
	case ErrorRate, Availability, TargetUp:
		return "ratio"
	case Ratio:
		return "burn_rate"
	}
	if i := o.Signal.Info(); i.Unit != "ms" {
		return i.Unit
	}
	return "s" // stored in seconds, shown in ms
}

// Validate reports what makes o unusable; call it after WithDefaults.
func (o Objective) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, err := path.Match(o.Endpoint, ""); err != nil {
		bad("endpoint pattern %q: %v", o.Endpoint, err)
	}
	if o.Signal == "" {
		bad("no signal")
	}
	if !(o.Threshold > 0) || math.IsInf(o.Threshold, 0) {
		if !(o.Kind == Ratio && o.Signal == telemetry.ProbeSuccess) {
			bad("threshold %v must be positive", o.Threshold)
		}
	}
	if o.For < 0 || o.KeepFiringFor < 0 {
		bad("for and keep_firing_for must not be negative")
	}
	switch o.Kind {
	case Percentile:
		if !(o.Percentile > 0 && o.Percentile < 1) {
			bad("percentile %v must be within (0, 1): 0.95 is p95", o.Percentile)
		}
		if o.Window <= 0 {
			bad("window must be positive")
		}
	case ErrorRate:
		if o.Threshold >= 1 {
			bad("error-rate threshold %v must be a ratio below 1 (1%% = 0.01)", o.Threshold)
		}
		if o.Window <= 0 {
			bad("window must be positive")
		}
	case Availability:
		if !(o.Target > 0 && o.Target < 1) {
			bad("target %v must be within (0, 1): 0.5 is half the probes", o.Target)
		}
		if o.Window <= 0 {
			bad("window must be positive")
		}
	case TargetUp:
	case Ratio:
		if !(o.Target > 0 && o.Target < 1) {
			bad("target %v must be within (0, 1): 0.99 is 99%%", o.Target)
		}
		if o.Period <= 0 {
			bad("period must be positive")
		}
		for i, w := range o.BurnWindows {
			if !(w.Factor > 0) || w.Short <= 0 || w.Long < w.Short || w.Long > o.Period {
				bad("burn window %d: need factor > 0 and 0 < short ≤ long ≤ period (got %v× %v/%v)", i, w.Factor, w.Long, w.Short)
			}
		}
	default:
		bad("kind %q is not percentile, ratio, error_rate, availability or target_up", o.Kind)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("objective %s: %w", o.Name, err)
	}
	return nil
}

// Warnings lists settings that are valid but cannot work as meant.
func (o Objective) Warnings() []string {
	var w []string
	if o.Kind == Ratio && o.Target > 0 && o.Target < 1 {
		// A burn rate can never exceed 1/(1 − target): at 90 % the 14.4×
		// page would need more than 100 % errors.
		maxBurn := 1 / budgetOf(o.Target)
		for _, bw := range o.BurnWindows {
			if bw.Factor >= maxBurn {
				w = append(w, fmt.Sprintf("objective %s: burn factor %v can never fire: the maximum burn rate at target %s is %.4g",
					o.Name, bw.Factor, FormatRatio(o.Target), maxBurn))
			}
		}
	}
	return w
}

// Matches reports whether the objective applies to the endpoint.
func (o Objective) Matches(endpoint string) bool {
	if o.Endpoint == "" || o.Endpoint == "*" {
		return true
	}
	ok, err := path.Match(o.Endpoint, endpoint)
	return err == nil && ok
}

// Scaled returns o with its time parameters divided by factor, so a demo
// shows a 28-day objective's alerts within minutes. Ratio objectives scale
// their period, burn windows, For and KeepFiringFor; percentile and
// error-rate windows are real-time figures and are left alone. Windows
// shorter than minWindow are raised to it: a window holding less than one
// refresh of data has nothing to judge.
func (o Objective) Scaled(factor float64, minWindow time.Duration) Objective {
	if o.Kind != Ratio || !(factor > 0) || factor == 1 && minWindow <= 0 {
		return o
	}
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) / factor) }
	atLeast := func(d time.Duration) time.Duration { return max(d, minWindow) }
	o.Period = atLeast(sc(o.Period))
	o.For, o.KeepFiringFor = sc(o.For), sc(o.KeepFiringFor)
	bw := make([]BurnWindow, len(o.BurnWindows))
	for i, w := range o.BurnWindows {
		// A pair whose short window would fall below minWindow is scaled
		// less, so that its long window stays that many times longer: a
		// long window floored to the short one smooths nothing, and the
		// alert flaps with every burst (QA: 10s/10s pages every 2 min).
		f := factor
		if w.Short > 0 && sc(w.Short) < minWindow {
			f = max(float64(w.Short)/float64(minWindow), 1)
		}
		w.Short = atLeast(time.Duration(float64(w.Short) / f))
		w.Long = max(atLeast(time.Duration(float64(w.Long)/f)), w.Short)
		w.Long = min(w.Long, o.Period)
		w.Short = min(w.Short, w.Long)
		bw[i] = w
	}
	o.BurnWindows = bw
	return o
}

// String says the objective in words: "TTFT p95 < 5s over 5m",
// "99% of TTFT ≤ 5s over 28d", "error rate < 1% over 5m".
func (o Objective) String() string {
	title := o.Signal.Info().Title
	switch o.Kind {
	case Percentile:
		return fmt.Sprintf("%s p%s ≤ %s over %s", title, trimFloat(o.Percentile*100),
			FormatValue(o.Signal, o.Threshold), FormatDuration(o.Window))
	case Ratio:
		if o.Signal == telemetry.ProbeSuccess {
			return fmt.Sprintf("%s of probes succeed over %s", FormatRatio(o.Target), FormatDuration(o.Period))
		}
		return fmt.Sprintf("%s of requests with %s ≤ %s over %s", FormatRatio(o.Target), title,
			FormatValue(o.Signal, o.Threshold), FormatDuration(o.Period))
	case ErrorRate:
		return fmt.Sprintf("error rate ≤ %s over %s", FormatRatio(o.Threshold), FormatDuration(o.Window))
	case Availability:
		return fmt.Sprintf("probe failures ≤ %s over %s", FormatRatio(budgetOf(o.Target)), FormatDuration(o.Window))
	case TargetUp:
		return "target up (a model row: every replica)"
	}
	return o.Name
}

// Claim says a threshold objective's figure against its promise, in the
// promise's own words: description is what String wrote ("TTFT p95 ≤ 5s
// over 5m"), value the figure as the views print it; "TTFT p95 7.2s > 5s
// over 5m" when breach, else "… ≤ …". A description not of that form
// (a ratio objective's) is returned after the value: "value: description".
func Claim(description, value string, breach bool) string {
	head, rest, ok := strings.Cut(description, " ≤ ")
	if !ok {
		return value + ": " + description
	}
	rel := " ≤ "
	if breach {
		rel = " > "
	}
	return head + " " + value + rel + rest
}

// TargetUpClaim is a target-up alert's figure the way it breaches, for the
// alert line and the notifications alike: "target down (up 0%)", on a model
// row "up 50% < 100%" (some replicas down), "up 100%" when none is.
func TargetUpClaim(up float64) string {
	v := figures.Value(up*100, "%")
	switch {
	case up <= 0:
		return "target down (up " + v + ")"
	case up < 1:
		return "up " + v + " < 100%"
	}
	return "up " + v
}

// budgetOf is the error budget 1 − target, rounded so that 1 − 0.999 is
// 0.001 and not 0.0009999999999999432, so burn rates at a threshold
// compare exactly.
func budgetOf(target float64) float64 {
	return math.Round((1-target)*1e12) / 1e12
}

// FormatValue prints a threshold or value of sig in its natural unit:
// seconds as durations ("50ms", "5s"), ratios as percentages.
func FormatValue(sig telemetry.Signal, v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	info := sig.Info()
	switch {
	case info.Unit == "ms":
		return FormatDuration(time.Duration(math.Round(v * 1e9)).Round(time.Microsecond))
	case info.Unit == "%":
		return FormatRatio(v)
	}
	return trimFloat(v*info.Scale) + info.Unit
}

// FormatRatio prints 0.01 as "1%" and 0.999 as "99.9%".
func FormatRatio(v float64) string { return trimFloat(v*100) + "%" }

// FormatPercentile writes a percentile as names and flags do: 0.95 → "95".
func FormatPercentile(p float64) string { return trimFloat(p * 100) }

// FormatDuration prints durations the way people write them: "5m", "28d",
// "1h30m", "50ms" rather than "5m0s".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	if d < time.Second {
		return b.String() + d.String()
	}
	day := 24 * time.Hour
	if d >= day {
		fmt.Fprintf(&b, "%dd", d/day)
		d %= day
	}
	for _, u := range []struct {
		d time.Duration
		s string
	}{{time.Hour, "h"}, {time.Minute, "m"}} {
		if d >= u.d {
			fmt.Fprintf(&b, "%d%s", d/u.d, u.s)
			d %= u.d
		}
	}
	if d > 0 {
		b.WriteString(trimFloat(d.Seconds()) + "s")
	}
	return b.String()
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}
