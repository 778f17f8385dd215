package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// sloFlags are the --slo-* flags shared by the dashboard, check and exporter
// commands. Only flags the user actually gives change anything, so a
// config file's objectives keep their values unless overridden:
// precedence is flag > config > slo.DefaultObjectives.
type sloFlags struct {
	ttft, tpot, e2e      setValue[time.Duration]
	ttfa                 setValue[time.Duration]
	errorRate, target    setValue[float64]
	percentile           setValue[float64]
	window, period       setValue[time.Duration]
	forDur, keepFiring   setValue[time.Duration]
	scale                setValue[float64]
	availability         setValue[float64]
	availabilityWindow   setValue[time.Duration]
	defaultFor, defaultK time.Duration
}

// setValue is a pflag.Value that remembers whether it was given.
type setValue[T comparable] struct {
	v     T
	set   bool
	parse func(string) (T, error)
	show  func(T) string
	kind  string // the value's name in --help: duration, ratio...
}

func (s *setValue[T]) Type() string { return s.kind }

func (s *setValue[T]) Set(in string) error {
	v, err := s.parse(in)
	if err != nil {
		return err
	}
	s.v, s.set = v, true
	return nil
}

func (s *setValue[T]) String() string {
	var zero T
	if s == nil || s.show == nil || s.v == zero {
		return "" // help shows no default for 0: each usage says what 0 means
	}
	return s.show(s.v)
}

func durationValue(def time.Duration) setValue[time.Duration] {
	return setValue[time.Duration]{v: def, parse: slo.ParseDuration, show: slo.FormatDuration, kind: "duration"}
}

func ratioValue(def float64) setValue[float64] {
	return setValue[float64]{v: def, parse: slo.ParseRatio, show: slo.FormatRatio, kind: "ratio"}
}

// newSLOFlags returns the --slo-* values with their defaults, unbound.
func newSLOFlags() *sloFlags {
	def := slo.DefaultObjectives()
	f := &sloFlags{
		ttft:       durationValue(seconds(def[0].Threshold)),
		tpot:       durationValue(seconds(def[1].Threshold)),
		e2e:        durationValue(0),
		ttfa:       durationValue(0),
		errorRate:  ratioValue(0),
		target:     ratioValue(0),
		percentile: setValue[float64]{v: slo.DefaultPercentile, parse: slo.ParsePercentile, show: slo.FormatPercentile, kind: "percentile"},
		window:     durationValue(slo.DefaultWindow),
		period:     durationValue(slo.DefaultPeriod),
		forDur:     durationValue(def[0].For),
		keepFiring: durationValue(def[0].KeepFiringFor),
		scale: setValue[float64]{v: 1, parse: parseScale, kind: "factor", show: func(v float64) string {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}},
		availability:       setValue[float64]{v: slo.DefaultAvailabilityTarget, parse: parseRatioOrZero, show: slo.FormatRatio, kind: "ratio"},
		availabilityWindow: durationValue(slo.DefaultAvailabilityWindow),
		defaultFor:         def[0].For, defaultK: def[0].KeepFiringFor,
	}
	return f
}

// bindLatency registers the latency thresholds: objectives where SLOs are
// judged, and goodput's bounds everywhere (probe judges no SLO but counts
// good requests against the same thresholds).
func (f *sloFlags) bindLatency(fs *pflag.FlagSet) {
	const goodput = "; goodput counts a request good only when it meets every such threshold (0 = none)"
	fs.Var(&f.ttft, "slo-ttft", "objective: TTFT percentile must stay at or below this"+goodput)
	fs.Var(&f.tpot, "slo-tpot", "objective: TPOT percentile must stay at or below this"+goodput)
	fs.Var(&f.ttfa, "slo-ttfa", "objective: time-to-first-answer-token percentile (after a model's reasoning) must stay at or below this"+goodput)
	fs.Var(&f.e2e, "slo-e2e", "objective: end-to-end latency percentile must stay at or below this"+goodput)
}

// bindSLOFlags registers every --slo-* flag on fs.
func bindSLOFlags(fs *pflag.FlagSet) *sloFlags {
	f := newSLOFlags()
	f.bindLatency(fs)
	fs.Var(&f.errorRate, "slo-error-rate", "objective: failed requests / all requests must stay at or below this, e.g. 1% (0 = none)")
	fs.Var(&f.percentile, "slo-percentile", "percentile the latency objectives judge: 95, 99, 99.9")
	fs.Var(&f.window, "slo-window", "window of the percentile and error-rate objectives")
	fs.Var(&f.target, "slo-target", "add ratio objectives: this share of requests must meet each latency threshold, e.g. 99% (burn-rate alerts)")
	fs.Var(&f.period, "slo-period", "period of the ratio objectives, e.g. 28d")
	fs.Var(&f.forDur, "slo-for", "a breach must last this long before its alert fires (the default is the latency objectives'; availability fires at once unless this is given)")
	fs.Var(&f.keepFiring, "slo-keep-firing-for", "keep a firing alert firing this long after the breach ends, against flapping (the default is the latency objectives'; availability resolves once failures are back within its target unless this is given)")
	fs.Var(&f.availability, "slo-availability", "objective on every probed endpoint: at least this share of probes succeed over --slo-availability-window; a dead or failing endpoint fires (0 = none)")
	fs.Var(&f.availabilityWindow, "slo-availability-window", "window of the availability objective")
	fs.Var(&f.scale, "slo-scale", "divide ratio periods and burn windows by this factor, for demos (4032 turns 28d into 10m; a burn-window pair whose short window would fall under the minimum is scaled less, keeping its long/short ratio)")
	return f
}

// parseRatioOrZero is slo.ParseRatio that also takes 0 (off).
func parseRatioOrZero(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v == 0 {
		return 0, nil
	}
	return slo.ParseRatio(s)
}

func parseScale(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 1) {
		return 0, fmt.Errorf("invalid scale %q: a factor of 1 or more", s)
	}
	return v, nil
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// Objectives returns slo.DefaultObjectives with the given flags applied.
func (f *sloFlags) Objectives() ([]slo.Objective, error) { return f.Apply(slo.DefaultObjectives()) }

// Options returns the engine options the flags imply (the demo scale).
func (f *sloFlags) Options() slo.Options { return slo.Options{Scale: f.scale.v} }

// Changed reports whether any --slo-* flag was given.
func (f *sloFlags) Changed() bool {
	return f.ttft.set || f.tpot.set || f.e2e.set || f.ttfa.set || f.errorRate.set || f.target.set || f.percentile.set ||
		f.window.set || f.period.set || f.forDur.set || f.keepFiring.set || f.scale.set ||
		f.availability.set || f.availabilityWindow.set
}

// Apply returns base (objectives from a config file, or the defaults) with
// the flags that were given applied on top, completed and validated.
func (f *sloFlags) Apply(base []slo.Objective) ([]slo.Objective, error) {
	objs := make([]slo.Objective, len(base))
	copy(objs, base)
	latency := []struct {
		sig telemetry.Signal
		v   *setValue[time.Duration]
	}{{telemetry.TTFT, &f.ttft}, {telemetry.TTFA, &f.ttfa}, {telemetry.TPOT, &f.tpot}, {telemetry.E2E, &f.e2e}}
	for _, l := range latency {
		if l.v.set {
			objs = f.setThreshold(objs, slo.Percentile, l.sig, l.v.v.Seconds())
		}
	}
	if f.errorRate.set {
		objs = f.setThreshold(objs, slo.ErrorRate, telemetry.ErrorRate, f.errorRate.v)
	}
	if f.target.set && !slices.ContainsFunc(objs, func(o slo.Objective) bool { return o.Kind == slo.Ratio }) {
		// No ratio objective yet: promise the target for every latency
		// threshold in use.
		for _, o := range objs {
			if o.Kind == slo.Percentile && isAll(o.Endpoint) {
				objs = append(objs, f.newObjective(slo.Ratio, o.Signal, o.Threshold))
			}
		}
	}
	// The availability objective first, so that --slo-for and
	// --slo-keep-firing-for, when given, apply to it as to the others.
	objs = f.applyAvailability(objs)
	objs = f.applyTargetUp(objs)
	for i := range objs {
		f.override(&objs[i])
	}
	out := make([]slo.Objective, 0, len(objs))
	for _, o := range objs {
		o = o.WithDefaults()
		if err := o.Validate(); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if err := checkNames(out); err != nil {
		return nil, err
	}
	return out, nil
}

// applyAvailability adds the availability objective unless one is
// configured (whose target and window the flags then tune) or it is off.
func (f *sloFlags) applyAvailability(objs []slo.Objective) []slo.Objective {
	i := slices.IndexFunc(objs, func(o slo.Objective) bool { return o.Kind == slo.Availability })
	if f.availability.v == 0 {
		return slices.DeleteFunc(objs, func(o slo.Objective) bool { return o.Kind == slo.Availability })
	}
	if i < 0 {
		o := slo.AvailabilityObjective()
		o.Target, o.Window = f.availability.v, f.availabilityWindow.v
		return append(objs, o)
	}
	if f.availability.set {
		objs[i].Target = f.availability.v
	}
	if f.availabilityWindow.set {
		objs[i].Window = f.availabilityWindow.v
	}
	return objs
}

// applyTargetUp adds the target_up objective (scraped targets and
// replicas in the store) unless one is configured; availability off
// (--slo-availability 0) turns it off too.
func (f *sloFlags) applyTargetUp(objs []slo.Objective) []slo.Objective {
	if f.availability.v == 0 {
		return slices.DeleteFunc(objs, func(o slo.Objective) bool { return o.Kind == slo.TargetUp })
	}
	if !slices.ContainsFunc(objs, func(o slo.Objective) bool { return o.Kind == slo.TargetUp }) {
		objs = append(objs, slo.TargetUpObjective())
	}
	return objs
}

// override applies the flags that tune every objective of a kind.
func (f *sloFlags) override(o *slo.Objective) {
	derived := o.HasDerivedName()
	switch o.Kind {
	case slo.Percentile:
		if f.percentile.set {
			o.Percentile = f.percentile.v
		}
		if f.window.set {
			o.Window = f.window.v
		}
	case slo.ErrorRate:
		if f.window.set {
			o.Window = f.window.v
		}
	case slo.Ratio:
		if f.target.set {
			o.Target = f.target.v
		}
		if f.period.set && o.Period != f.period.v {
			// Workbook windows follow the period; hand-written ones stay.
			if o.BurnWindows == nil || slices.Equal(o.BurnWindows, slo.WorkbookBurnWindows(o.Period)) {
				o.BurnWindows = nil
			}
			o.Period = f.period.v
		}
	}
	if f.forDur.set {
		o.For = f.forDur.v
	}
	if f.keepFiring.set {
		o.KeepFiringFor = f.keepFiring.v
	}
	if derived {
		o.Name = ""
	}
}

// setThreshold sets the threshold of the all-endpoint objectives of kind
// and signal (ratio objectives on the same signal follow), adds one when
// none exists, and removes them for a threshold of 0.
func (f *sloFlags) setThreshold(objs []slo.Objective, kind slo.Kind, sig telemetry.Signal, v float64) []slo.Objective {
	found := false
	out := objs[:0]
	for _, o := range objs {
		same := o.Kind == kind && (kind == slo.ErrorRate || o.Signal == sig)
		follows := o.Kind == slo.Ratio && kind == slo.Percentile && o.Signal == sig
		if isAll(o.Endpoint) && (same || follows) {
			if v == 0 {
				continue
			}
			found = found || same
			o.Threshold = v
		}
		out = append(out, o)
	}
	if v > 0 && !found {
		out = append(out, f.newObjective(kind, sig, v))
	}
	return out
}

func (f *sloFlags) newObjective(kind slo.Kind, sig telemetry.Signal, v float64) slo.Objective {
	o := slo.Objective{Kind: kind, Signal: sig, Threshold: v}
	if kind == slo.Percentile || kind == slo.ErrorRate {
		o.For, o.KeepFiringFor = f.defaultFor, f.defaultK
	}
	return o
}

func isAll(pattern string) bool { return pattern == "" || pattern == "*" }

// checkNames refuses two objectives with one name: alerts, history and
// Alertmanager labels are keyed by it.
func checkNames(objs []slo.Objective) error {
	seen := map[string]bool{}
	for _, o := range objs {
		if seen[o.Name] {
			return fmt.Errorf("two objectives are named %q: give them distinct names", o.Name)
		}
		seen[o.Name] = true
	}
	return nil
}
