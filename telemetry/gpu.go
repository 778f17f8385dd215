package telemetry

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// KindGPU carries one GPU's state from one refresh of a GPU source
// (Observation.GPU): the per-device figures the GPU panel lists, beside
// the per-endpoint aggregates the same source emits as signals.
const KindGPU Kind = "gpu"

// GPU signals of an endpoint, aggregated over the GPUs joined to it.
const (
	// GPUPower is the power the endpoint's GPUs draw, in watts, summed.
	GPUPower Signal = "gpu_power"
	// EnergyPerToken is GPU energy per output token over the window, in
	// joules per token; the store derives it (see energyPerToken).
	EnergyPerToken Signal = "energy_per_token"
)

// GPUDevice is one GPU (or MIG instance) as its source last reported it.
// Units are in the JSON names; a nil figure is unknown, never zero.
type GPUDevice struct {
	// Key identifies the device within its source: host/uuid-or-index[/migN].
	Key    string `json:"key"`
	Host   string `json:"host,omitempty"`
	Index  string `json:"index"`
	UUID   string `json:"uuid,omitempty"`
	MIG    string `json:"mig,omitempty"`
	Name   string `json:"name,omitempty"`
	Source string `json:"source"`
	// Endpoints are the endpoints the GPU is joined to (empty: unclaimed).
	Endpoints []string `json:"endpoints,omitempty"`

	MemUsedBytes  *float64 `json:"mem_used_bytes,omitempty"`
	MemTotalBytes *float64 `json:"mem_total_bytes,omitempty"`
	// DRAMActiveRatio is DCGM_FI_PROF_DRAM_ACTIVE (0–1): measured memory
	// bandwidth use. MemBusyRatio is memory busy time (MEM_COPY_UTIL,
	// nvidia-smi utilization.memory): not a bandwidth fraction.
	DRAMActiveRatio *float64 `json:"dram_active_ratio,omitempty"`
	MemBusyRatio    *float64 `json:"mem_busy_ratio,omitempty"`
	// UtilRatio is the share of time a kernel ran (GPU_UTIL,
	// utilization.gpu): near 1 whenever anything runs, not a measure of
	// how much of the GPU is used.
	UtilRatio          *float64 `json:"util_ratio,omitempty"`
	PowerW             *float64 `json:"power_w,omitempty"`
	PowerLimitW        *float64 `json:"power_limit_w,omitempty"`
	TemperatureCelsius *float64 `json:"temperature_celsius,omitempty"`
	// EnergyJ is the device's energy counter (joules since the driver
	// loaded), where the source has one.
	EnergyJ *float64 `json:"energy_j,omitempty"`

	ObservedAt time.Time `json:"observed_at"`
	// State is Live or Stale, decided at snapshot time.
	State State `json:"state,omitempty"`
}

type gpuState struct {
	dev      GPUDevice
	interval time.Duration
}

// observeGPU keeps the device's latest state (called with s.mu held).
func (s *Store) observeGPU(o Observation) {
	if o.GPU == nil || o.GPU.Key == "" {
		return
	}
	d := *o.GPU
	d.Endpoints = slices.Clone(d.Endpoints)
	if d.Source == "" {
		d.Source = o.Source
	}
	d.ObservedAt = o.At
	k := d.Source + "|" + d.Key
	prev, ok := s.gpus[k]
	if ok && prev.dev.ObservedAt.After(o.At) {
		return
	}
	if !ok {
		s.pruneGPUs(o.At) // only when a device appears: bounded, and cheap per scrape
	}
	s.gpus[k] = &gpuState{dev: d, interval: o.Interval}
}

// gpuSnapshot lists the devices at now, by host then index (natural
// order), dropping those unseen for longer than the longest window.
func (s *Store) gpuSnapshot(now time.Time) []GPUDevice {
	var out []GPUDevice
	for _, g := range s.gpus {
		age := now.Sub(g.dev.ObservedAt)
		if age > s.cfg.MaxWindow {
			continue
		}
		d := g.dev
		d.Endpoints = slices.Clone(d.Endpoints)
		d.State = Live
		if age > s.cfg.SilentAfter(g.interval) {
			d.State = Stale
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b GPUDevice) int {
		return cmp.Or(strings.Compare(a.Host, b.Host), naturalCompare(a.Index, b.Index),
			strings.Compare(a.MIG, b.MIG), strings.Compare(a.Source, b.Source), strings.Compare(a.Key, b.Key))
	})
	return out
}

// pruneGPUs forgets devices unseen for longer than the longest window, so
// a fleet whose GPUs come and go keeps bounded memory.
func (s *Store) pruneGPUs(now time.Time) {
	for k, g := range s.gpus {
		if now.Sub(g.dev.ObservedAt) > s.cfg.MaxWindow {
			delete(s.gpus, k)
		}
	}
}

// naturalCompare orders GPU indexes as numbers ("2" < "10"), anything
// else as text.
func naturalCompare(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}
