// Package gpu reads GPU memory activity for ttftop's endpoints from
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
//   - telemetry.GPUPower: power (W) summed over the GPUs, each from its
//     energy counter's mean since the counter last moved
//     (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION) where it has one, else its
//     sampled draw (DCGM_FI_DEV_POWER_USAGE, nvidia-smi power.draw). The
//     store derives telemetry.EnergyPerToken from it.
//
// Per GPU, every refresh also emits a telemetry.KindGPU observation: the
// device's memory used/total, DRAM activity or busy time, utilisation,
// power and limit, temperature and energy counter, with the endpoints it
// is joined to (the GPU panel, Snapshot.GPUs).
//
// GPUs are mapped to endpoints by Targets: by host (Hostname/hostname or
// pod label), pod, namespace, GPU index/UUID, or explicit label selectors.
package gpu
