package sim

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ModelStats is a snapshot of one engine, for the demo, tests and tools:
// one per model, or per data-parallel rank of a model with DPRanks.
type ModelStats struct {
	Model           string
	Running         int
	Waiting         int
	KVCacheUsage    float64       // 0–1, as vllm:kv_cache_usage_perc
	StepTime        time.Duration // duration of the latest step
	MeanStepTime    time.Duration // mean step over the last second (≈ mean ITL)
	BusyFraction    float64       // share of the last second with a step running
	DRAMActive      float64       // DCGM_FI_PROF_DRAM_ACTIVE over the last second
	AchievedBW      float64       // bytes/s over the last second, all GPUs
	MBU             float64       // achieved bandwidth while busy / peak (docs/engines.md)
	TokensPerSec    float64       // output tokens/s over the last second
	BandwidthFactor float64       // scenario multiplier on Efficiency (1 = healthy)
	Outage          bool
	Steps           int64
	Overruns        int64 // times the step schedule was rebased because the process lagged
	Rank            int   // data-parallel rank (0 without)
	// FirstTokens counts the requests that had their first token: the
	// TTFT histogram's count as the engine recorded it.
	FirstTokens uint64
}

// Stats returns a snapshot per served model.
func (s *Server) Stats() []ModelStats {
	now := s.now()
	out := make([]ModelStats, len(s.engines))
	for i, e := range s.engines {
		w := e.win.read(e.windowAt(now))
		st := ModelStats{
			Model:           e.spec.Name,
			Rank:            e.rank,
			FirstTokens:     e.metrics.firstTokens(),
			Running:         int(e.nRunning.Load()),
			Waiting:         int(e.nWaiting.Load()),
			KVCacheUsage:    e.kvUsage(),
			StepTime:        time.Duration(e.lastStepNs.Load()),
			MeanStepTime:    time.Duration(w.meanStepNs),
			BusyFraction:    w.busyFrac,
			DRAMActive:      w.dramActive,
			AchievedBW:      w.bytesPerS,
			TokensPerSec:    w.tokensPerS,
			BandwidthFactor: math.Float64frombits(e.lastBWFactor.Load()),
			Outage:          e.outage.Load(),
			Steps:           e.steps.Load(),
			Overruns:        e.overruns.Load(),
		}
		if w.busyFrac > 0 {
			st.MBU = w.dramActive / w.busyFrac
		}
		out[i] = st
	}
	return out
}

func (e *engine) kvUsage() float64 {
	if e.totalBlocks == 0 {
		return 0
	}
	return float64(e.usedBlocks.Load()) / float64(e.totalBlocks)
}

// GPUInfo describes one simulated GPU and the served model running on it.
// The DCGM series carry the same values as labels: gpu, UUID, device,
// modelName, Hostname, and the Kubernetes mapping pod/namespace/container
// that dcgm-exporter adds, with pod = PodName(model).
type GPUInfo struct {
	Index     int    // label gpu
	UUID      string // label UUID
	Device    string // label device, "nvidia<Index>"
	ModelName string // label modelName, e.g. "NVIDIA H100 80GB HBM3"
	Hostname  string // label Hostname
	Pod       string // label pod
	Namespace string // label namespace
	Container string // label container
	Model     string // served model name (not a DCGM label)
	GPU       string // GPU table key
	engine    *engine
}

// PodNamespace and PodContainer are the fixed k8s labels of DCGM series.
const (
	PodNamespace = "ttftop-sim"
	PodContainer = "vllm"
)

// PodName maps a served model name to the pod label of its GPUs:
// lower-case, non-alphanumerics collapsed to "-", suffixed "-0"
// ("meta-llama/Llama-3.1-8B-Instruct" → "meta-llama-llama-3-1-8b-instruct-0").
func PodName(model string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(model) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-") + "-0"
}

func buildGPUs(s *Server) []GPUInfo {
	var out []GPUInfo
	for _, e := range s.engines {
		for i := 0; i < e.spec.NumGPUs; i++ {
			idx := len(out)
			h := mix(textSeed(0, s.cfg.Hostname, fmt.Sprint(idx)))
			h2 := mix(h)
			out = append(out, GPUInfo{
				Index: idx,
				UUID: fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(h), uint16(h>>32), uint16(h>>48),
					uint16(h2), h2>>16&0xffffffffffff),
				Device:    fmt.Sprintf("nvidia%d", idx),
				ModelName: e.gpu.DCGMName,
				Hostname:  s.cfg.Hostname,
				Pod:       PodName(e.spec.Name),
				Namespace: PodNamespace,
				Container: PodContainer,
				Model:     e.spec.Name,
				GPU:       e.gpu.Name,
				engine:    e,
			})
		}
	}
	return out
}

// GPUs lists the simulated GPUs in DCGM order.
func (s *Server) GPUs() []GPUInfo { return append([]GPUInfo(nil), s.gpus...) }
