// Package bandwidth knows GPU peak memory bandwidth and estimates MBU.
//
// Two different numbers reach the views, and they must never be confused:
//
//   - Measured DRAM activity (telemetry.GPUMemBW), from dcgm-exporter's
//     DCGM_FI_PROF_DRAM_ACTIVE: the ratio of cycles the memory interface
//     was busy, measured by the GPU. Achieved bandwidth ≈ DRAM_ACTIVE ×
//     peak. Fallbacks (DCGM_FI_DEV_MEM_COPY_UTIL, nvidia-smi
//     utilization.memory) are memory *busy time*, not a bandwidth
//     fraction, and are marked approximate by the gpu source.
//
//   - Estimated MBU (telemetry.MBU, always Approx): model bandwidth
//     utilisation computed from the engine's own metrics and the model's
//     configured size (Databricks' definition; docs/engines.md):
//
//     MBU = (weight bytes + live KV bytes) / decode step time / (peak × GPUs)
//
//     weight bytes = parameters × bytes per parameter; live KV bytes =
//     KV usage × KV capacity tokens × KV bytes per token (or live KV
//     tokens × bytes per token); step time = mean ITL over the interval
//     (Δsum/Δcount); GPUs = tensor-parallel degree of one replica. It
//     ignores activations and any traffic that is not weights or KV, and
//     chunked prefill inflates the step time, so it is an estimate and
//     only meaningful for decode-dominated intervals.
//
// Peak bandwidths are vendor datasheet values in decimal bytes per second
// (1 TB/s = 10^12 B/s).
package bandwidth
