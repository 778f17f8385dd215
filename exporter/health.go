package exporter

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// sourceHealth is what /healthz knows of one non-probe source (PromQL,
// dcgm-exporter, nvidia-smi) when the exporter runs no probes.
type sourceHealth struct {
	interval time.Duration
	answered time.Time // receipt time (Now) of its last live or no-data report
	state    telemetry.State
	err      string
}

// observeSource keeps a non-probe source's last report for /healthz.
// Notifiers are not sources of figures: a failing webhook says nothing of
// what is exported.
func (e *Exporter) observeSource(o telemetry.Observation) {
	kind := telemetry.SourceKindOf(o.Source)
	if o.Status == nil || o.Source == "" || kind == telemetry.SourceProbe || kind == telemetry.SourceNotify {
		return
	}
	now := e.opts.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	sh, ok := e.sources[o.Source]
	if !ok {
		if len(e.sources) >= maxHealthSources {
			return
		}
		sh = &sourceHealth{}
		e.sources[o.Source] = sh
	}
	if o.Interval > 0 {
		sh.interval = o.Interval
	}
	sh.state, sh.err = o.Status.State, o.Status.Err
	// Live or no data: the source answered. A lagging store (stale) or
	// a failed refresh did not bring figures of now.
	if o.Status.State == telemetry.Live || o.Status.State == telemetry.NoData {
		sh.answered = now
	}
}

// maxHealthSources bounds the sources /healthz tracks; a configuration
// has a handful.
const maxHealthSources = 64

// Health reports whether the exporter's figures are arriving. With probes
// (the default): ok while the last probe result is younger than the
// probe limit, or while the exporter is younger than its grace (starting).
// With Options.NoProbes: ok while some source (a PromQL store, a
// dcgm-exporter) answered within its staleness, three of its refresh
// intervals (at least 5 s). Otherwise the reason. A failed probe is a
// result: a target failing is not the exporter failing.
func (e *Exporter) Health() (ok bool, reason string) {
	if e.opts.NoProbes {
		return e.sourcesHealth()
	}
	return e.probeHealth()
}

// probeLimit is how long the exporter may go without a probe result: three
// probe intervals (jitter and a late start or two) plus the request
// timeout, as a probe of a hung target runs until its stall or request
// timeout before it reports (the request timeout bounds both). The text
// says how the limit is made.
func (e *Exporter) probeLimit(interval time.Duration) (time.Duration, string) {
	limit := 3*interval + e.opts.ProbeTimeout
	return limit, fmt.Sprintf("limit %s = 3 × %s probe interval + %s request timeout", limit, interval, e.opts.ProbeTimeout)
}

func (e *Exporter) probeHealth() (ok bool, reason string) {
	last, interval := e.lastProbeInfo()
	limit, makeup := e.probeLimit(interval)
	now := e.opts.Now()
	if last.IsZero() {
		// Before its first probe a runner may list the target's models,
		// which a hung target holds for a request timeout too.
		grace := limit + e.opts.ProbeTimeout
		up := now.Sub(e.started)
		if up <= grace {
			return true, fmt.Sprintf("starting: no probe result yet (%s of %s grace = the limit + %s request timeout of a model listing)",
				up.Round(time.Second), grace, e.opts.ProbeTimeout)
		}
		return false, fmt.Sprintf("no probe result since start %s ago (grace %s = %s, + %s request timeout of a model listing)",
			up.Round(time.Second), grace, makeup, e.opts.ProbeTimeout)
	}
	age := now.Sub(last)
	if age <= limit {
		return true, fmt.Sprintf("last probe result %s ago (%s)", age.Round(time.Millisecond), makeup)
	}
	return false, fmt.Sprintf("no probe result for %s (%s)", age.Round(time.Second), makeup)
}

// sourceLimit is how long a source may go without answering: telemetry's
// staleness, so /healthz and the store agree on when a source went silent.
// The text says how the limit is made from the refresh interval it used
// (the default for a source that named none).
func sourceLimit(interval time.Duration) (time.Duration, string) {
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	cfg := telemetry.DefaultStoreConfig()
	limit := cfg.SilentAfter(interval)
	missed := time.Duration(cfg.StaleIntervals * float64(interval))
	makeup := fmt.Sprintf("limit %s = %g × %s refresh", limit, cfg.StaleIntervals, interval)
	if limit > missed {
		makeup += fmt.Sprintf(" (at least %s)", cfg.MinStaleAfter)
	}
	return limit, makeup
}

func (e *Exporter) sourcesHealth() (ok bool, reason string) {
	now := e.opts.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	up := now.Sub(e.started)
	ids := make([]string, 0, len(e.sources))
	graceLimit, _ := sourceLimit(0)
	for id, sh := range e.sources {
		ids = append(ids, id)
		limit, _ := sourceLimit(sh.interval)
		graceLimit = max(graceLimit, limit)
	}
	sort.Strings(ids)
	var troubles []string
	for _, id := range ids {
		sh := e.sources[id]
		limit, makeup := sourceLimit(sh.interval)
		if !sh.answered.IsZero() && now.Sub(sh.answered) <= limit {
			return true, fmt.Sprintf("%s answered %s ago (%s)", id, now.Sub(sh.answered).Round(time.Millisecond), makeup)
		}
		troubles = append(troubles, sourceTrouble(id, sh, now, up, makeup))
	}
	if up <= graceLimit {
		if len(ids) == 0 {
			return true, fmt.Sprintf("starting: no source report yet (%s of %s grace)", up.Round(time.Second), graceLimit)
		}
		return true, fmt.Sprintf("starting (%s of %s grace): %s", up.Round(time.Second), graceLimit, strings.Join(troubles, "; "))
	}
	if len(ids) == 0 {
		return false, fmt.Sprintf("no source report since start %s ago (limit %s)", up.Round(time.Second), graceLimit)
	}
	return false, strings.Join(troubles, "; ")
}

// sourceTrouble says why a source does not count as answering.
func sourceTrouble(id string, sh *sourceHealth, now time.Time, up time.Duration, makeup string) string {
	since := "since start " + up.Round(time.Second).String() + " ago"
	if !sh.answered.IsZero() {
		since = "for " + now.Sub(sh.answered).Round(time.Second).String()
	}
	s := fmt.Sprintf("%s: no answer %s (%s), last report %s", id, since, makeup, sh.state)
	if sh.err != "" {
		s += ": " + sh.err
	}
	return s
}
