// Package promql reads LLM serving metrics from a Prometheus-compatible
// HTTP API (Prometheus, Thanos, Mimir, VictoriaMetrics): `--prometheus URL`.
//
// # Queries from the alias table
//
// The default queries are generated (generate.go, families.go) from
// engines.All(), the table the direct scraper reads, plus ttftop's own
// exporter: every engine, signal and alias type (histograms with their
// scale, gauges with their aggregation and label matches, counter rates,
// counter ratios, histogram sums, error counters), older names used per
// endpoint only where the newer is absent, and a TPOT derived from the
// per-token histogram's mean (engines.Derivations) where an engine has no
// TPOT histogram. One label-values call per DiscoveryInterval finds which
// engines the store holds; only theirs are queried. NIM and TensorRT-LLM,
// which share unprefixed names, each claim a target by the table's
// markers. docs/engines.md has the details.
//
// # Replicas and GPUs
//
// Series keep Config.ReplicaLabels (pod, instance): each replica is an
// endpoint, grouped under an aggregate endpoint per model and GroupBy
// values (telemetry.Endpoint Group and Aggregate). Histogram windows of the
// aggregate are its replicas' summed here; its values come from the same
// instant query, aggregated by the server without the replica labels. GPU
// series name no endpoint and are joined to replicas by pod or host
// (gpu.go), never averaged over the fleet; GPU power is summed over the
// GPUs joined (power adds up), DRAM activity averaged.
//
// # Target health
//
// Each refresh also asks for min by (<replica labels>, <group_by>) (up),
// with the targets' process starts in the same answer (processstart.go),
// and joins it to the replicas by their replica key (targets.go): a
// replica whose up is 0 is DOWN (telemetry.LabelTarget, TargetUp 0), for
// the reason the store's /api/v1/targets gives (asked when a target goes
// down and every 30 s while one stays down; a store without that API is
// warned about and read from up alone); one whose up series the store no
// longer has, or that never had one and has no sample for MaxLag, is GONE,
// and is retired only once gone for the viewed window (at least MaxLag). A
// model row gets the share of its known replicas up and
// telemetry.LabelReplicasDown. A failed up query is a warning: the
// figures do not depend on it.
//
// # Design: histogram increments, not server-side quantiles
//
// Distribution signals (TTFT, TPOT, ITL, E2E) are fetched as cumulative
// bucket counters summed per endpoint, sum by (le, <labels>)
// (<histogram>_bucket), evaluated at multiples of R (HistogramStep) on the
// server's clock by one range query per refresh. Consecutive steps are
// differenced exactly into windows (t−R, t] and emitted as
// telemetry.KindHistogram with cumulative buckets: the same Δ(cumulative
// buckets) a direct scrape emits, so the store, the SLO engine and the charts
// treat PromQL and scrape data identically — same quantile maths
// (telemetry.HistogramQuantile), same windows, integer good/bad counts at
// bucket edges — and PromQL mode backfills Backfill of history at start,
// or the window on screen (backfill.go; value signals' too,
// samplehistory.go).
// Server-side histogram_quantile would give one number per fixed window that
// the store could neither re-window nor turn into good-event ratios; and
// increase(…[R]) per window extrapolates each window from a sample of its
// scrapes, which measurably distorts sparse tails. A counter reset or a
// change in the number of series summed (a pod came or went) would corrupt a
// difference of sums: the window is skipped with a warning (the
// ttftop_part="series" count detects churn). A custom query whose series
// carry no le label (say a histogram_quantile with $Q) is emitted as plain
// samples instead.
//
// Values (running, waiting, KV cache, output tok/s, error rate, counter
// ratios, derived TPOT, GPU memory bandwidth and power) are instant queries. Each
// refresh makes one or two requests per signal (a query over
// VictoriaMetrics' length limit is split by engine) plus the freshness
// query (and, once a DiscoveryInterval, one label-values call): the count
// never depends on the number of endpoints.
//
// # Result contract (default and custom queries)
//
//   - ttftop_engine: which family answered (an engine of engines.All(),
//     ttftop, dcgm); recorded as the endpoint's engine. Its model labels
//     name the model (untagged: model_name, else model); engines without
//     one take Config.Models by job, or the job label. endpoint names the endpoint
//     (ttftop exporter), else the model does. Config.GroupBy values
//     prefix it: "<namespace>/<model>".
//   - Replica labels (pod, instance) set: the series is one replica's,
//     "<replica>/<model>"; unset: the aggregate's.
//   - le: a cumulative histogram bucket; ttftop_part="sum": the _sum;
//     ttftop_part="series": how many series the sums cover (optional);
//     ttftop_scale: factor to seconds of bounds and sum.
//   - ttftop_derived, ttftop_mean: the value is derived or a mean of
//     counters (marked approximate).
//   - A series with no model or endpoint label is joined by pod, host or
//     GroupBy values (gpu.go); one that joins nothing is a warning.
//
// # Restarts
//
// A restarted engine counts from zero again. Counter rates are generated
// by afreshRate: while a reset lies in [W], the counter's new count over
// W, never rate()'s average of the old life, the gap and the new one. A
// restart is seen as a new process_start_time_seconds of the replica's
// target (asked with up, processstart.go), as a reset in the histogram
// chain, as samples back
// after a stop, or as a replica found again after it was retired; its
// rates are then marked young until W has passed, and it is labelled
// restarted (restarts.go, young.go).
//
// # Data honesty
//
// NaN, ±Inf and absent series are KindNoData, never 0. A failed query is a
// KindFailure for the signals it feeds, and the source status turns to
// error with a sanitised, truncated, secret-scrubbed message (HTTP 503 query
// timeouts, 400 bad_data, HTML pages from proxies). Prometheus warnings and
// infos appear in the status. Gauge values are dated by the timestamp of the
// endpoint's newest sample (freshness query), so a lagging backend shows as
// stale; histogram windows are dated by their end.
package promql
