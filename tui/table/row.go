// Package table is the main screen's endpoint table: one row per endpoint,
// columns dropped by priority when narrow, sort, filter, and scrolling that
// renders only the visible rows (200 endpoints cost what 40 do).
package table

import (
	"github.com/tokentop/tokentop/slo"
	"github.com/tokentop/tokentop/telemetry"
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
}

// Name is the row's key.
func (r *Row) Name() string { return r.Endpoint.Name }

// Sig returns one signal snapshot of the row.
func (r *Row) Sig(s telemetry.Signal) (telemetry.SignalSnapshot, bool) {
	v, ok := r.Endpoint.Signals[s]
	return v, ok
}
