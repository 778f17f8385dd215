package table

import "github.com/ttftop/ttftop/telemetry"

// LoRA adapters. A probed adapter's endpoint names its base model in the
// label adapter_of. It folds under its base's row (telemetry.AdapterBases
// picks it) as a replica folds under its model row (replicas.go): the base
// row says "+N LoRA", x lists the adapters under it and hides them again.

// adapterBases maps each adapter row's name to its base row's name.
func adapterBases(rows []Row) map[string]string {
	eps := make([]telemetry.Endpoint, len(rows))
	for i := range rows {
		eps[i] = rows[i].Endpoint.Endpoint
	}
	return telemetry.AdapterBases(eps)
}

// adapterCounts counts each base row's adapters.
func adapterCounts(bases map[string]string) map[string]int {
	n := map[string]int{}
	for _, b := range bases {
		n[b]++
	}
	return n
}
