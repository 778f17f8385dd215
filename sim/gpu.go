package sim

import (
	"fmt"
	"sort"
	"strings"
)

// GPU describes a simulated accelerator. Peak bandwidths are the datasheet
// (decimal) figures of bandwidth.Table so MBU computed by tokentop from the
// simulator's numbers uses the same denominators as on real hardware.
type GPU struct {
	Name       string  // short key used in ModelSpec.GPU, e.g. "H100 SXM"
	DCGMName   string  // modelName label as dcgm-exporter / nvidia-smi report it
	PeakBW     float64 // bytes/s per GPU
	MemMiB     int     // framebuffer size (DCGM_FI_DEV_FB_TOTAL), MiB
	TDPWatts   float64 // board power limit, for DCGM_FI_DEV_POWER_USAGE
	IdleWatts  float64
	DenseFLOPS float64 // bf16 dense FLOP/s, used only to derive a default prefill rate
}

var gpuTable = map[string]GPU{
	"H100 SXM":  {"H100 SXM", "NVIDIA H100 80GB HBM3", 3.35e12, 81559, 700, 70, 989e12},
	"H100 PCIe": {"H100 PCIe", "NVIDIA H100 PCIe", 2.0e12, 81559, 350, 50, 756e12},
	"H100 NVL":  {"H100 NVL", "NVIDIA H100 NVL", 3.9e12, 95830, 400, 60, 835e12},
	"H200":      {"H200", "NVIDIA H200", 4.8e12, 143771, 700, 75, 989e12},
	"A100 80GB": {"A100 80GB", "NVIDIA A100-SXM4-80GB", 2.039e12, 81920, 400, 55, 312e12},
	"A100 40GB": {"A100 40GB", "NVIDIA A100-SXM4-40GB", 1.555e12, 40960, 400, 50, 312e12},
	"L40S":      {"L40S", "NVIDIA L40S", 864e9, 46068, 350, 35, 362e12},
	"A10":       {"A10", "NVIDIA A10", 600e9, 23028, 150, 20, 125e12},
	"L4":        {"L4", "NVIDIA L4", 3.0e11, 23034, 72, 16, 121e12},
	"B200":      {"B200", "NVIDIA B200", 8e12, 183359, 1000, 120, 2250e12},
}

// LookupGPU finds a GPU by its short name, case-insensitively ("h100 sxm",
// "H100-SXM" and "h100_sxm" all match).
func LookupGPU(name string) (GPU, error) {
	norm := func(s string) string {
		return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(s))
	}
	for k, g := range gpuTable {
		if norm(k) == norm(name) {
			return g, nil
		}
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(GPUNames(), ", "))
}

// GPUNames lists the GPU keys accepted by ModelSpec.GPU, sorted.
func GPUNames() []string {
	names := make([]string, 0, len(gpuTable))
	for k := range gpuTable {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
