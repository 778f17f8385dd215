package diagnosis

import (
	"encoding/json"

	"github.com/ttftop/ttftop/telemetry"
)

// MarshalJSON writes the evidence's value and baseline named for their
// unit, as all of ttftop's JSON (docs/json.md): "value_ms",
// "baseline_ratio" (a percentage as a fraction); a unit the JSON has no
// name for is used as it is ("value_signals").
func (e Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence
	m, err := telemetry.JSONMap(plain(e))
	if err != nil {
		return nil, err
	}
	unit, per := telemetry.JSONUnit(e.Unit)
	if unit == "" {
		unit = e.Unit
	}
	delete(m, "unit")
	delete(m, "value")
	delete(m, "baseline")
	m["value_"+unit] = e.Value / per
	if e.Baseline != nil {
		m["baseline_"+unit] = *e.Baseline / per
	}
	return json.Marshal(m)
}

// MarshalJSON writes MBU as a fraction (mbu_ratio) and the running batch
// as a count of requests, beside the fields in ms.
func (d Decomposition) MarshalJSON() ([]byte, error) {
	type plain Decomposition
	out := struct {
		plain
		// The display-unit fields, hidden: always nil, and outer fields
		// win over the embedded ones of the same name.
		MBUPct          *float64 `json:"mbu_pct,omitempty"`
		Running         *float64 `json:"running,omitempty"`
		MBURatio        *float64 `json:"mbu_ratio,omitempty"`
		RunningRequests *float64 `json:"running_requests,omitempty"`
	}{plain: plain(d), RunningRequests: d.Running}
	if d.MBUPct != nil {
		r := *d.MBUPct / 100
		out.MBURatio = &r
	}
	return json.Marshal(out)
}
