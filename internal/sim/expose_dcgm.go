package sim

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// driverVersion is the DCGM_FI_DRIVER_VERSION label dcgm-exporter attaches.
const driverVersion = "550.144.03"

// serveDCGM renders dcgm-exporter style GPU series, one per simulated
// GPU, from each engine's activity over the last second:
//   - DCGM_FI_PROF_DRAM_ACTIVE = bytes moved / (peak bandwidth × 1 s), so it
//     equals achieved/peak bandwidth and agrees with the MBU of the TPOT
//     served (docs/engines.md);
//   - DCGM_FI_DEV_GPU_UTIL = % of time a step ran;
//   - DCGM_FI_DEV_MEM_COPY_UTIL = % of time the memory path was the
//     bottleneck (busy time, not bandwidth, as in DCGM);
//   - DCGM_FI_DEV_FB_USED/FREE: vLLM preallocates gpu_memory_utilization
//     of the framebuffer, so usage is flat; used + free = the GPU's size;
//   - DCGM_FI_DEV_POWER_USAGE (W) follows activity (GPU.powerWatts: idle
//     power plus a share of the range for busy time and DRAM activity);
//     DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ, counter) is its integral
//     since start; DCGM_FI_DEV_POWER_MGMT_LIMIT is the board power;
//     DCGM_FI_DEV_GPU_TEMP follows power (GPU.temperatureCelsius).
//
// Label order follows fixtures/metrics/dcgm-exporter-metrics.txt, with the
// Kubernetes pod mapping (container, namespace, pod) naming the model.
func (s *Server) serveDCGM(w http.ResponseWriter, r *http.Request) {
	type row struct {
		labels                      string
		util, memUtil, used, free   int
		temp                        int
		power, grActive, dramActive float64
		limit, energy               float64
	}
	now := s.now()
	rows := make([]row, 0, len(s.gpus))
	for _, g := range s.gpus {
		e := g.engine // the model's, or its rank's
		st := e.win.read(e.windowAt(now))
		used := int(math.Round(float64(e.gpu.MemMiB) * gpuMemUtilization))
		power := e.gpu.powerWatts(st.busyFrac, st.dramActive)
		busyNs, activeNs := e.win.totals()
		rows = append(rows, row{
			labels: `gpu="` + strconv.Itoa(g.Index) + `",UUID="` + g.UUID + `",device="` + g.Device +
				`",modelName="` + escapeLabel(g.ModelName) + `",Hostname="` + escapeLabel(g.Hostname) +
				`",DCGM_FI_DRIVER_VERSION="` + driverVersion + `",container="` + g.Container +
				`",namespace="` + g.Namespace + `",pod="` + g.Pod + `"`,
			util:       int(math.Round(st.busyFrac * 100)),
			memUtil:    int(math.Round(st.memBusy * 100)),
			used:       used,
			free:       e.gpu.MemMiB - used,
			power:      power,
			limit:      e.gpu.TDPWatts,
			energy:     e.gpu.energyMillijoules(float64(now), busyNs, activeNs),
			temp:       int(math.Round(e.gpu.temperatureCelsius(power))),
			grActive:   st.busyFrac,
			dramActive: st.dramActive,
		})
	}
	var b strings.Builder
	ints := func(name, help string, v func(row) int) {
		family(&b, name, "gauge", help)
		for _, r := range rows {
			sample(&b, name, r.labels, strconv.Itoa(v(r)))
		}
	}
	floats := func(name, help string, v func(row) float64) {
		family(&b, name, "gauge", help)
		for _, r := range rows {
			sample(&b, name, r.labels, strconv.FormatFloat(v(r), 'f', 6, 64))
		}
	}
	ints("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", func(r row) int { return r.temp })
	ints("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", func(r row) int { return r.util })
	ints("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", func(r row) int { return r.memUtil })
	ints("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", func(r row) int { return r.free })
	ints("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", func(r row) int { return r.used })
	floats("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", func(r row) float64 { return r.power })
	floats("DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W).", func(r row) float64 { return r.limit })
	family(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).")
	for _, r := range rows {
		sample(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", r.labels, strconv.FormatFloat(math.Floor(r.energy), 'f', 0, 64))
	}
	floats("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", func(r row) float64 { return r.grActive })
	floats("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data.",
		func(r row) float64 { return r.dramActive })
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write([]byte(b.String()))
}
