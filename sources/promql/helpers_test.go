package promql

import (
	"math"

	"github.com/ttftop/ttftop/telemetry"
)

func within(got, want, rel float64) bool {
	return !math.IsNaN(got) && math.Abs(got-want) <= rel*math.Abs(want)+1e-9
}

// lastOf keeps the last observation (of the last refresh).
func lastOf(obs []telemetry.Observation) []telemetry.Observation {
	if len(obs) == 0 {
		return nil
	}
	return obs[len(obs)-1:]
}
