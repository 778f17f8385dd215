package table

// Data-parallel ranks. A server whose engine runs a model on several
// data-parallel ranks arrives as its usual row, whose figures combine the
// ranks, and one row per rank naming it in Group and labelled dp_rank
// (telemetry.LabelRank). The server's row says "dp×N"; x lists its ranks
// under it, indented ("dp rank 1"), as it lists a model's replicas
// (replicas.go). A rank is not a serving endpoint of its own: the counts
// count its server once.

// rankCounts counts each row's ranks in the data.
func rankCounts(rows []Row) map[string]int {
	n := map[string]int{}
	for i := range rows {
		if rows[i].Endpoint.IsRank() {
			n[rows[i].Endpoint.Group]++
		}
	}
	return n
}

// servingCount counts the serving endpoints among rows folded under a
// parent: replicas and adapters, not ranks.
func servingCount(rows []*Row) int {
	n := 0
	for _, r := range rows {
		if !r.Endpoint.IsRank() {
			n++
		}
	}
	return n
}
