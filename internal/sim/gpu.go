package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ttftop/ttftop/bandwidth"
)

// GPU describes a simulated accelerator. Name and PeakBW come from
// bandwidth.Table, the one table of GPUs, so MBU computed by ttftop from
// the simulator's numbers uses the same denominators as on real hardware.
type GPU struct {
	Name       string  // bandwidth.Table's name, used in ModelSpec.GPU, e.g. "H100 SXM"
	DCGMName   string  // modelName label as dcgm-exporter / nvidia-smi report it
	PeakBW     float64 // bytes/s per GPU
	MemMiB     int     // framebuffer size (DCGM_FI_DEV_FB_TOTAL), MiB
	TDPWatts   float64 // board power limit, for DCGM_FI_DEV_POWER_USAGE
	IdleWatts  float64
	DenseFLOPS float64 // bf16 dense FLOP/s, used only to derive a default prefill rate
}

// simFigures are what only the simulator needs to know of a GPU, keyed by
// bandwidth.Table's names.
type simFigures struct {
	dcgmName   string
	memMiB     int
	tdp, idle  float64
	denseFLOPS float64
}

func simulatedGPUs() map[string]simFigures {
	return map[string]simFigures{
		"H100 SXM":      {"NVIDIA H100 80GB HBM3", 81559, 700, 70, 989e12},
		"H100 PCIe":     {"NVIDIA H100 PCIe", 81559, 350, 50, 756e12},
		"H100 NVL":      {"NVIDIA H100 NVL", 95830, 400, 60, 835e12},
		"H200":          {"NVIDIA H200", 143771, 700, 75, 989e12},
		"A100 80GB SXM": {"NVIDIA A100-SXM4-80GB", 81920, 400, 55, 312e12},
		"A100 40GB":     {"NVIDIA A100-SXM4-40GB", 40960, 400, 50, 312e12},
		"L40S":          {"NVIDIA L40S", 46068, 350, 35, 362e12},
		"A10":           {"NVIDIA A10", 23028, 150, 20, 125e12},
		"L4":            {"NVIDIA L4", 23034, 72, 16, 121e12},
		"B200":          {"NVIDIA B200", 183359, 1000, 120, 2250e12},
	}
}

// gpuTable is bandwidth.Table's GPUs that the simulator can play.
func gpuTable() map[string]GPU {
	figs := simulatedGPUs()
	out := make(map[string]GPU, len(figs))
	for _, g := range bandwidth.Table() {
		if f, ok := figs[g.Name]; ok {
			out[g.Name] = GPU{Name: g.Name, DCGMName: f.dcgmName, PeakBW: g.Peak, MemMiB: f.memMiB,
				TDPWatts: f.tdp, IdleWatts: f.idle, DenseFLOPS: f.denseFLOPS}
		}
	}
	return out
}

// LookupGPU finds a GPU by its name, case-insensitively ("h100 sxm",
// "H100-SXM" and "h100_sxm" all match), or by a name as a GPU reports it
// ("NVIDIA A100-SXM4-80GB", "A100 80GB": bandwidth.Lookup).
func LookupGPU(name string) (GPU, error) {
	norm := func(s string) string {
		return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(s))
	}
	table := gpuTable()
	for k, g := range table {
		if norm(k) == norm(name) {
			return g, nil
		}
	}
	if b, ok := bandwidth.Lookup(name); ok {
		if g, ok := table[b.Name]; ok {
			return g, nil
		}
	}
	return GPU{}, fmt.Errorf("unknown GPU %q (known: %s)", name, strings.Join(GPUNames(), ", "))
}

// GPUNames lists the GPU keys accepted by ModelSpec.GPU, sorted.
func GPUNames() []string {
	table := gpuTable()
	names := make([]string, 0, len(table))
	for k := range table {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// The power model, documented in docs/engines.md: a GPU draws IdleWatts
// doing nothing and approaches TDPWatts when busy, compute (the share of
// time a step runs) weighing 0.35 and memory traffic (DRAM-active ratio)
// 0.5 of the range: decode is memory-bound, so a GPU streaming weights at
// full bandwidth draws most of its board power.
const (
	powerBusyWeight = 0.35
	powerDRAMWeight = 0.5
)

// powerWatts is the draw at GPU utilisation busy and DRAM activity dram
// (ratios 0–1).
func (g GPU) powerWatts(busy, dram float64) float64 {
	return g.IdleWatts + (g.TDPWatts-g.IdleWatts)*(powerBusyWeight*busy+powerDRAMWeight*dram)
}

// energyMillijoules integrates powerWatts since start: idle power over
// the elapsed time plus the weighted busy and DRAM-active seconds, so the
// counter's increase over any interval is the mean of the power over it
// (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is in mJ).
func (g GPU) energyMillijoules(elapsedNs, busyNs, activeNs float64) float64 {
	j := g.IdleWatts*elapsedNs/1e9 + (g.TDPWatts-g.IdleWatts)*(powerBusyWeight*busyNs+powerDRAMWeight*activeNs)/1e9
	return j * 1000
}

// temperatureCelsius is the steady-state die temperature at power p: 30 °C
// ambient plus 45 °C at the power limit (no thermal lag is simulated).
func (g GPU) temperatureCelsius(p float64) float64 {
	return 30 + 45*p/g.TDPWatts
}
