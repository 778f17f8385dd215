package tui

import "github.com/ttftop/ttftop/telemetry"

// pdModelOf is the disaggregated model endpoint belongs to in snap: as
// its router, one of its pools or a pool's replica; nil when none.
func pdModelOf(snap telemetry.Snapshot, endpoint string) *telemetry.PDModel {
	group := ""
	for _, es := range snap.Endpoints {
		if es.Name == endpoint {
			group = es.Group
		}
	}
	for _, m := range telemetry.PDModels(snap) {
		for _, es := range append(append(append([]telemetry.EndpointSnapshot(nil), m.Routers...), m.Prefill...), m.Decode...) {
			if es.Name == endpoint || es.Name == group {
				return &m
			}
		}
	}
	return nil
}
