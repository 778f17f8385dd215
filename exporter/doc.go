// Package exporter serves ttftop's own probe measurements and SLO state as
// Prometheus metrics, so a Prometheus (and KEDA, Grafana, Alertmanager) can
// use what ttftop measures from the outside.
//
// Latency histograms reuse vLLM's exact bucket boundaries: dashboards and SLO
// rules written for vllm:time_to_first_token_seconds work on
// ttftop_probe_ttft_seconds by changing only the metric name, and SLO
// thresholds that are exact vLLM bucket bounds (5 s TTFT, 50 ms TPOT) stay
// exact here.
//
// The exporter keeps its own state and turns it into metrics at scrape time
// (custom collectors on a private registry): the model label is the one
// known at scrape time even when the model was learnt after the first probe,
// SLO values are read from the engine at scrape time so they are never stale
// copies, and the cardinality cap is enforced in one place.
package exporter
