package scrape

import (
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// Data-parallel ranks. An engine serving a model with several
// data-parallel ranks labels each rank's series (engines.Spec.RankLabels:
// vLLM's engine, SGLang's dp_rank). The model's endpoint combines them as
// before (histograms summed by le, gauges by their Alias.Agg, counters
// summed); a model whose series carry two ranks or more also gets one
// endpoint per rank, "<endpoint> [dp N]", naming the model's endpoint in
// Group, so a rank whose figures differ is seen. Each series' increment is
// taken once and added to both.

// countRanks counts each model's distinct ranks on the families the
// engine's signals read.
func (sc *scrape) countRanks() {
	if len(sc.spec.RankLabels) == 0 {
		return
	}
	seen := map[[2]string]bool{}
	for _, n := range sc.spec.Names() {
		f := sc.page.Families[n]
		if f == nil || f.Err != nil {
			continue
		}
		for _, ser := range f.Series {
			r := sc.rawRank(ser)
			if r == "" {
				continue
			}
			if key := [2]string{sc.rawModel(ser), r}; !seen[key] {
				seen[key] = true
				sc.nRanks[key[0]]++
			}
		}
	}
}

// rawRank is a series' rank label value as exposed, "" when it has none.
func (sc *scrape) rawRank(ser *expo.Series) string {
	for _, l := range sc.spec.RankLabels {
		if v := ser.Label(l); v != "" {
			return v
		}
	}
	return ""
}

// modelRank returns the model of a series and, when its model has several
// ranks, its rank (nil otherwise), registering it on first sight.
func (sc *scrape) modelRank(ser *expo.Series) (mv, rk *modelVals) {
	mv = sc.model(ser)
	raw := sc.rawRank(ser)
	if raw == "" || sc.nRanks[sc.rawModel(ser)] < 2 {
		return mv, nil
	}
	if rk = mv.ranks[raw]; rk != nil {
		return mv, rk
	}
	rank := sanitize.Text(raw) // label values enter here
	rk = &modelVals{model: mv.model, endpoint: mv.endpoint + " [dp " + rank + "]", parent: mv, rank: rank}
	if mv.ranks == nil {
		mv.ranks = map[string]*modelVals{}
	}
	mv.ranks[raw] = rk
	sc.ranks = append(sc.ranks, rk)
	return mv, rk
}

// rowsOf are the rows a series counts in, the first n: its model's, and
// its rank's when the model's ranks are counted apart.
func (sc *scrape) rowsOf(ser *expo.Series) (rows [2]*modelVals, n int) {
	mv, rk := sc.modelRank(ser)
	if rk == nil {
		return [2]*modelVals{mv}, 1
	}
	return [2]*modelVals{mv, rk}, 2
}

// accFor is mv's accumulator in accs, made and put in order on first use.
func accFor[A any](accs map[*modelVals]*A, order *[]*modelVals, mv *modelVals) *A {
	a := accs[mv]
	if a == nil {
		a = new(A)
		accs[mv] = a
		*order = append(*order, mv)
	}
	return a
}

// rankEndpoint is a rank's announcement: under its model's endpoint,
// labelled with its rank.
func rankEndpoint(rk *modelVals, base telemetry.Endpoint) telemetry.Endpoint {
	base.Name, base.Group, base.Replica = rk.endpoint, rk.parent.endpoint, telemetry.RankReplica(rk.rank)
	labels := make(map[string]string, len(base.Labels)+1)
	for k, v := range base.Labels {
		labels[k] = v
	}
	labels[telemetry.LabelRank] = rk.rank
	base.Labels = labels
	return base
}
