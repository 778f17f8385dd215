package promql

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// pageWideExpr reads a gauge whose series name no model (engines.Alias
// PageWide: a router's pool gauges, labelled by the pool) for every model
// its target serves, as the direct scrape gives it to every model of the
// page: the gauge combined per target (by's labels less the model's),
// joined one-to-many onto the models with a request counter there. With
// by holding no target label (a model row) the gauge is combined over all
// targets of the family.
func pageWideExpr(f *family, a engines.Alias, by string) string {
	var target, names []string
	for _, l := range strings.Split(by, ", ") {
		if !slices.Contains(f.modelLabels, l) {
			target = append(target, l)
		}
	}
	for _, r := range f.spec.Signals[telemetry.RequestRate] {
		names = append(names, regexp.QuoteMeta(r.Name))
	}
	if len(names) == 0 {
		return "vector(0) unless vector(0)" // no model to give it to (the engine table's test rules it out)
	}
	on := strings.Join(target, ", ")
	models := "count by (" + by + ") ({__name__=~\"" + strings.Join(names, "|") + "\"})"
	return "(" + promAgg(a.Agg) + " by (" + on + ") (" + f.claimed(a.Name, selector(a.Name, a.Match, "")) + ")" +
		" * on (" + on + ") group_right () (" + models + " * 0 + 1))"
}
