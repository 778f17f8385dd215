package telemetry

import "testing"

// A scraped decode worker whose engine runs two data-parallel ranks is one
// worker of its pool: its rank rows are not counted as workers.
func TestPDWorkerRanksAreOneWorker(t *testing.T) {
	rank := func(r string) EndpointSnapshot {
		return EndpointSnapshot{Endpoint: Endpoint{Name: "d0/m [dp " + r + "]", Model: "m", Group: "d0/m", Replica: RankReplica(r),
			Labels: map[string]string{LabelRole: RoleDecode, LabelRank: r}}}
	}
	snap := Snapshot{Endpoints: []EndpointSnapshot{
		{Endpoint: Endpoint{Name: "p0/m", Model: "m", Labels: map[string]string{LabelRole: RolePrefill}}},
		{Endpoint: Endpoint{Name: "d0/m", Model: "m", Labels: map[string]string{LabelRole: RoleDecode}}},
		rank("0"), rank("1"),
	}}
	models := PDModels(snap)
	if len(models) != 1 || models[0].DecodeWorkers != 1 || models[0].DecodeUp != 1 || len(models[0].Decode) != 1 {
		t.Fatalf("models %+v, want one decode worker (its ranks not counted)", models)
	}
	if !snap.Endpoints[2].IsRank() || snap.Endpoints[1].IsRank() {
		t.Error("IsRank does not tell a rank from its worker")
	}
}
