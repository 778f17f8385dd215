// Package table is the main screen's endpoint table: one row per endpoint,
// columns dropped by priority when narrow, sort, filter, and scrolling that
// renders only the visible rows (200 endpoints cost what 40 do).
package table

import (
	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Row is one endpoint with everything its line shows. Rows are built off
// the update path (in the refresh command) and never mutated after.
type Row struct {
	Endpoint telemetry.EndpointSnapshot
	Badge    slo.Badge
	// TTFT and TPOT sparkline points, display units, NaN = gap.
	TTFT, TPOT []float64
	// SLO thresholds in display units, for colouring the sparklines.
	TTFTThr, TPOTThr       float64
	HasTTFTThr, HasTPOTThr bool
	// Server: the row shows the engine's own figures (the v key), not the
	// client's (probe) ones.
	Server bool
	// Cause is the leading finding of the endpoint's diagnosis when it
	// names one (nil when healthy or undiagnosed).
	Cause *diagnosis.Finding
	// MoreCauses is how many more causes the diagnosis names.
	MoreCauses int
}

// Name is the row's key.
func (r *Row) Name() string { return r.Endpoint.Name }

// Sig returns one signal snapshot of the row, of the side it shows.
func (r *Row) Sig(s telemetry.Signal) (telemetry.SignalSnapshot, bool) {
	if r.Server {
		if v, ok := r.Endpoint.Server[s]; ok {
			return v, true
		}
	}
	v, ok := r.Endpoint.Signals[s]
	if ok && r.Server && telemetry.ClientSignal(s) && Side(v) == telemetry.Client {
		return telemetry.SignalSnapshot{}, false // the engine has no figure of its own
	}
	return v, ok
}

// Probed reports whether some figure of the row is the client's (probe):
// only then does the v key have another side to show.
func (r *Row) Probed() bool {
	for _, v := range r.Endpoint.Signals {
		if Side(v) == telemetry.Client {
			return true
		}
	}
	return false
}

// Side is whose figure s is.
func Side(s telemetry.SignalSnapshot) telemetry.Side {
	return telemetry.SideOf(telemetry.SourceKindOf(s.Source))
}

// SourceMark is the SRC cell: whose latency figures the row shows.
func (r *Row) SourceMark() string {
	for _, sig := range []telemetry.Signal{telemetry.TTFT, telemetry.TPOT, telemetry.OutputTPS} {
		if v, ok := r.Sig(sig); ok && v.Source != "" {
			if Side(v) == telemetry.Client {
				return "probe"
			}
			return "server"
		}
	}
	return ""
}
