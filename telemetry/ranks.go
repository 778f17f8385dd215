package telemetry

// LabelRank is the label of a data-parallel rank's endpoint: the rank, as
// its engine labels it ("0", "1"…). A rank's endpoint names its replica's
// endpoint in Group and reads "dp rank N" as its Replica; the replica's
// own endpoint stays a serving endpoint whose figures combine its ranks
// (docs/disaggregated.md, "Data-parallel ranks").
const LabelRank = "dp_rank"

// IsRank reports whether e is one data-parallel rank of its replica.
func (e Endpoint) IsRank() bool { return e.Group != "" && e.Labels[LabelRank] != "" }

// RankReplica is what a rank's endpoint shows as its Replica.
func RankReplica(rank string) string { return "dp rank " + rank }
