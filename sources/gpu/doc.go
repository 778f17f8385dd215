// Package gpu reads GPU memory activity for tokentop's endpoints from
// dcgm-exporter (scraped directly) or from a local nvidia-smi loop, and
// maps GPUs to endpoints.
//
// Signals, per endpoint:
//   - telemetry.GPUMemBW: DCGM_FI_PROF_DRAM_ACTIVE (ratio 0–1 of cycles the
//     memory interface is busy — measured bandwidth utilisation), averaged
//     over the endpoint's GPUs. When only DCGM_FI_DEV_MEM_COPY_UTIL (0–100)
//     or nvidia-smi utilization.memory is available, its ratio is emitted
//     with Approx set: that is memory *busy time* (% of the sample period
//     with any read/write), not a bandwidth fraction, and the source status
//     says so.
//   - FBUsedMiB: framebuffer memory in use (MiB), summed over the GPUs.
//
// GPUs are mapped to endpoints by Targets: by host (Hostname/hostname or
// pod label), pod, namespace, GPU index/UUID, or explicit label selectors.
package gpu
