// Package diagnosis says why an endpoint is slow or failing, every refresh,
// from the figures the telemetry store already holds and the SLO engine's
// alert states. It decomposes the current latency (client TTFT into
// network/gateway, queue and prefill; TPOT against its memory-bandwidth
// floor) and names zero or more causes from a fixed vocabulary, each with
// the figures and baselines it rests on, when it began and a next step.
//
// Baselines are the endpoint's own recent history (a slow exponential
// average per figure, frozen while the endpoint is unwell) and its sibling
// replicas. The rules and their ratios are in docs/diagnosis.md. The
// package reads telemetry and slo only: it knows no source and no view.
package diagnosis
