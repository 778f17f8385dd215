package telemetry

import (
	"strings"
	"time"
)

// TargetUp is a scraped endpoint's target health, the store's `up` (PromQL
// mode) or ttftop's own scrape (direct scrape): 1 while the target's
// scrapes succeed, 0 while they fail. A model row's is the share of its
// replicas up, replicas the store no longer knows (GONE) left out.
const TargetUp Signal = "target_up"

// LabelTarget is a replica's or scraped endpoint's label while its target
// is not up: "down since <RFC 3339>: <reason>" while the store knows it
// and its scrapes fail, "gone since <RFC 3339>: <reason>" once the store
// no longer knows it (it stays listed for the viewed window). Absent while
// the target is up.
const LabelTarget = "target"

// LabelReplicasDown is a model row's label while some of its replicas are
// down or gone: "N of M replicas down".
const LabelReplicasDown = "replicas_down"

// Target health words of LabelTarget.
const (
	TargetDown = "down"
	TargetGone = "gone"
)

// TargetHealth is what LabelTarget says.
type TargetHealth struct {
	State  string // TargetDown or TargetGone
	Since  time.Time
	Reason string
}

// FormatTarget writes a LabelTarget value.
func FormatTarget(h TargetHealth) string {
	return h.State + " since " + h.Since.UTC().Format(time.RFC3339) + ": " + h.Reason
}

// Target reads LabelTarget; ok is false while the target is up (or its
// health is not known).
func (e Endpoint) Target() (h TargetHealth, ok bool) {
	v := e.Labels[LabelTarget]
	state, rest, found := strings.Cut(v, " since ")
	if !found || (state != TargetDown && state != TargetGone) {
		return TargetHealth{}, false
	}
	at, reason, _ := strings.Cut(rest, ": ")
	since, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return TargetHealth{}, false
	}
	return TargetHealth{State: state, Since: since, Reason: reason}, true
}

// ReplicasDown reads LabelReplicasDown: how many of a model row's
// replicas are down or gone, of how many; ok is false without the label.
func (e Endpoint) ReplicasDown() (down, of int, ok bool) { return e.nOfM(LabelReplicasDown) }
