package promql

import (
	"slices"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Restarts. An engine that restarts starts its counters from zero. Over a
// window [W] that holds samples from before the restart, Prometheus'
// rate() adds the count before the reset to the count after and divides
// by W: the figure averages the old life, the gap and the new one.
// afreshRate (generate.go) takes, while a reset lies in [W], only the new
// life's count, so a restarted replica's rates start afresh and read low
// until W has passed, as a new series' do: they are marked young
// (young.go) and the replica is labelled restarted
// (telemetry.LabelRestarted) for a while. A restart is seen as a counter
// reset in the histogram chain (a bucket count went down between two
// steps: a restart between two scrapes leaves no gap to see), as a new
// process_start_time_seconds of its target (processstart.go: seen a step
// sooner, and on engines without histograms), or as samples that come
// back after the endpoint had stopped (lag.go).

// restart records that e's series began again at at (server time), the
// newest sample of its life before at before; how says how it was seen.
func (rd *round) restart(e *endpointState, at, before time.Time, how string) {
	if len(e.members) > 0 {
		return // a model row: its replicas restart, and its figures are young through them
	}
	if before.IsZero() {
		before = at // never in a freshness answer before: its older samples still answered rates over [W]
	}
	if since, ok := rd.s.state.ages.restartedAt(e.info.Name); ok && (!at.After(since) || since.After(before)) {
		// Seen already: by another signal's chain, or dated inside this
		// gap by a signal that saw it sooner (a new process start).
		return
	}
	rd.s.state.ages.restarted(e.info.Name, at, before)
	label := telemetry.RestartedLabel(rd.s.localEval(at), how)
	rd.reg.setLabel(e, telemetry.LabelRestarted, label)
	if e.aggregate != nil {
		// The model row too: it is the only row shown of a lone replica,
		// and its sums read low with the replica's.
		rd.reg.setLabel(e.aggregate, telemetry.LabelRestarted, label+" (replica "+e.info.Replica+")")
	}
}

// expireRestarts takes the restarted label off the endpoints whose restart
// (a model row's: its replicas' newest) is older than
// telemetry.RestartedFor and their rate window.
func (rd *round) expireRestarts() {
	keep := max(telemetry.RestartedFor, rd.s.cfg.Window)
	recent := func(e *endpointState) bool {
		at, ok := rd.s.state.ages.restartedAt(e.info.Name)
		return ok && rd.lag.serverNow.Sub(at) < keep
	}
	for _, e := range rd.reg.all() {
		if e.info.Labels[telemetry.LabelRestarted] == "" || recent(e) || slices.ContainsFunc(e.members, recent) {
			continue
		}
		rd.reg.setLabel(e, telemetry.LabelRestarted, "")
	}
}
