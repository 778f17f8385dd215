package slo

import (
	"math"
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Result is one objective judged once on one endpoint, for `ttftop
// check`: no For, no alert state, just pass or fail on what was measured.
type Result struct {
	Objective   string           `json:"objective"`
	Description string           `json:"description"`
	Endpoint    string           `json:"endpoint"`
	Kind        Kind             `json:"kind"`
	Signal      telemetry.Signal `json:"signal"`
	// Measured is false when there was nothing to judge; Pass is then
	// false too and Reason says why.
	Measured bool `json:"measured"`
	Pass     bool `json:"pass"`
	// Value is the measured figure in base units (seconds, ratios); for
	// Ratio objectives the share of good events, compared with Target.
	Value     *float64        `json:"value,omitempty"`
	Threshold float64         `json:"threshold"`
	Count     float64         `json:"count,omitempty"`
	Approx    bool            `json:"approx,omitempty"`
	Data      telemetry.State `json:"data"`
	Source    string          `json:"source,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// Check judges every objective on every known endpoint at now, from
// whatever was measured, regardless of staleness: a check has measured
// once and judges that. Percentile and error-rate objectives pass when the
// figure is at or below the threshold, ratio objectives when the share of
// good events over the period is at least the target.
func (e *Engine) Check(now time.Time) []Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.discover()
	out := make([]Result, 0, len(e.rules))
	for _, r := range e.rules {
		if r.events != nil && !r.feeds {
			continue // one result per ratio objective, not per severity
		}
		o := &e.objs[r.obj]
		m := e.measure(r, now)
		res := Result{Objective: o.Name, Description: o.String(), Endpoint: r.endpoint, Kind: o.Kind, Signal: o.Signal,
			Threshold: o.Threshold, Count: m.count, Approx: m.approx, Data: m.data, Source: string(m.source)}
		v := m.value
		if o.Kind == Ratio {
			v, res.Threshold = m.goodRatio, o.Target
		}
		if math.IsNaN(v) {
			res.Reason = missingReason(m)
		} else {
			res.Measured, res.Value = true, &v
			if o.Kind == Ratio {
				res.Pass = v >= o.Target
			} else {
				res.Pass = v <= o.Threshold
			}
		}
		out = append(out, res)
	}
	return out
}
