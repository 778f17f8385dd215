package engines

import (
	"sort"

	"github.com/ttftop/ttftop/telemetry"
)

// Detection is the result of Detect.
type Detection struct {
	// Engine is the engine whose metrics the page carries, or
	// telemetry.EngineUnknown.
	Engine telemetry.Engine
	// Recognised lists, sorted, the page's families that the alias table
	// knows: of the detected engine, or of any engine when unknown.
	Recognised []string
	// Exporter names a known non-engine exporter ("dcgm-exporter") when
	// Engine is unknown.
	Exporter string
}

// Detect guesses the engine from the family names of one metrics page
// (after any relabelling prefix has been removed). Each engine scores two
// points per family of its table present, three per marker (a name only
// that engine exposes) and one when any name carries its prefix; the best
// score wins, ties going to the earlier engine in All.
func Detect(names []string) Detection { return NewTable().Detect(names) }

func dedupe(in []string) []string {
	sort.Strings(in)
	out := in[:0]
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}
