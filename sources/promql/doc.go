// Package promql reads LLM serving metrics from a Prometheus-compatible
// HTTP API (Prometheus, Thanos, Mimir, VictoriaMetrics): `--prometheus URL`.
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
// bucket edges — and PromQL mode backfills Backfill of history at start.
// Server-side histogram_quantile would give one number per fixed window that
// the store could neither re-window nor turn into good-event ratios; and
// increase(…[R]) per window extrapolates each window from a sample of its
// scrapes, which measurably distorts sparse tails. A counter reset or a
// change in the number of series summed (a pod came or went) would corrupt a
// difference of sums: the window is skipped with a warning (the
// tokentop_part="series" count detects churn). A custom query whose series
// carry no le label (say a histogram_quantile with $Q) is emitted as plain
// samples instead.
//
// Gauges (running, waiting, KV cache, output tok/s, error rate, GPU memory
// bandwidth) are instant queries. Each refresh makes one request per signal
// plus one freshness query (and, once a DiscoveryInterval, one label-values
// call): the count never depends on the number of endpoints.
//
// # Result contract (default and custom queries)
//
//   - model_name, else model: the model; endpoint: the endpoint name (tokentop
//     exporter), else the model is the name. Config.GroupBy label values
//     prefix it: "<instance>/<model>".
//   - tokentop_engine: which metric family answered (vllm, sglang,
//     tokentop); recorded as the endpoint's engine.
//   - le: a cumulative histogram bucket; tokentop_part="sum": the _sum;
//     tokentop_part="series": how many series the sums cover (optional).
//   - A series with no model_name, model or endpoint label applies to every
//     endpoint with the same GroupBy values (DCGM_FI_PROF_DRAM_ACTIVE per
//     node or namespace; with no GroupBy, to all endpoints).
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
