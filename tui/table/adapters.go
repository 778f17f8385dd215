package table

import (
	"sort"

	"github.com/ttftop/ttftop/telemetry"
)

// LoRA adapters. A probed adapter's endpoint names its base model in the
// label adapter_of (from /v1/models' parent). It folds under its base's
// row as a replica folds under its model row (replicas.go): the base row
// says "+N LoRA", x lists the adapters under it and hides them again.

// labelAdapterOf is the label a probe puts on an adapter's endpoint.
const labelAdapterOf = "adapter_of"

// adapterBases maps each adapter row's name to its base row's name. The
// base is a top-level row (no replica, no adapter) serving the base model:
// on the adapter's server when one is (quick mode probes each model of a
// server), else the one that is no P/D pool (the router's row), else the
// first by name. An adapter whose base is not in the data maps to none.
func adapterBases(rows []Row) map[string]string {
	byModel := map[string][]telemetry.Endpoint{}
	for i := range rows {
		e := rows[i].Endpoint.Endpoint
		if e.Group == "" && e.Labels[labelAdapterOf] == "" && e.Model != "" {
			byModel[e.Model] = append(byModel[e.Model], e)
		}
	}
	bases := map[string]string{}
	for i := range rows {
		e := rows[i].Endpoint.Endpoint
		if base := e.Labels[labelAdapterOf]; base != "" && e.Group == "" {
			if b, ok := pickBase(byModel[base], e.BaseURL); ok {
				bases[e.Name] = b
			}
		}
	}
	return bases
}

// pickBase chooses among the rows serving a base model (see adapterBases).
func pickBase(cands []telemetry.Endpoint, server string) (string, bool) {
	if len(cands) == 0 {
		return "", false
	}
	rank := func(e telemetry.Endpoint) int {
		switch {
		case server != "" && e.BaseURL == server:
			return 0
		case e.Labels[telemetry.LabelRole] == "":
			return 1
		}
		return 2
	}
	sort.SliceStable(cands, func(i, j int) bool {
		ri, rj := rank(cands[i]), rank(cands[j])
		return ri < rj || ri == rj && cands[i].Name < cands[j].Name
	})
	return cands[0].Name, true
}

// adapterCounts counts each base row's adapters.
func adapterCounts(bases map[string]string) map[string]int {
	n := map[string]int{}
	for _, b := range bases {
		n[b]++
	}
	return n
}
