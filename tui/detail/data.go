// Package detail is the per-endpoint view: TTFT/TPOT time-series charts
// with the SLO threshold and breach periods, the ITL distribution, tokens
// per event, the GPU panel, the last probes and the live token stream.
//
// Cost. Charts, panels and the probes table are cached (common.Memo)
// under a hash of what they show, and a live-text update re-renders only
// the live pane: go test ./tui -bench Detail (160×50, medians of 3, 2-core
// shared machine) live update 207 → 42 µs, refresh with unchanged figures
// 564 → 40 µs, full rebuild 557 → 402 µs. In the program the renderer's
// whole-screen diff of each repaint (~2–3 ms at 160×50) costs more than
// drawing, so the root also caps live reads at 5 Hz, phase-locked to the
// refresh (tui/fetch.go liveTick): bench/tui_bandwidth.sh, 160×50, 60 s,
// medians of 3 interleaved runs, ttftop demo detail 5.87 → 5.12 % CPU
// (its main screen, unchanged code, read 4.10 / 4.27 % that day), TUI alone
// (synthetic) detail 3.13 → 1.77 %.
package detail

import (
	"github.com/ttftop/ttftop/diagnosis"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// Source is what the detail view reads (the root's Data satisfies it).
type Source interface {
	Series(endpoint string, sig telemetry.Signal, now time.Time, span time.Duration, n int) []float64
	Probes(endpoint string) []telemetry.ProbeAt
	Live(endpoint string) (telemetry.LiveText, time.Time)
	WindowBuckets(endpoint string, sig telemetry.Signal, now time.Time, window time.Duration, bounds []float64) []telemetry.Bucket
}

// ThresholdFunc returns the SLO threshold of a signal in base units.
type ThresholdFunc func(endpoint string, sig telemetry.Signal) (float64, bool)

// FBUsed is the GPU framebuffer-in-use signal (MiB) when a GPU source
// reports it.
const FBUsed telemetry.Signal = "gpu_fb_used_mib"

// Data is everything the view shows beyond the endpoint snapshot. It is
// read in a tea.Cmd, off the update path.
type Data struct {
	Endpoint   string
	At         time.Time
	Window     time.Duration
	TTFT, TPOT []float64 // chart points, display units
	// Thresholds in display units.
	TTFTThr, TPOTThr, ITLThr          float64
	HasTTFTThr, HasTPOTThr, HasITLThr bool
	DRAM, MBU, FB, Power              []float64 // small sparklines
	ITL                               []telemetry.Bucket
	Probes                            []telemetry.ProbeAt
	Live                              telemetry.LiveText
	LiveAt                            time.Time
	// Objectives are every objective judged on the endpoint, with state;
	// HasObjectives says the SLO engine could list them.
	Objectives    []slo.Alert
	HasObjectives bool
	// Diagnosis is why the endpoint is unwell, when a cause is named.
	Diagnosis *diagnosis.Diagnosis
	// PD is the disaggregated model the endpoint belongs to (its router,
	// a pool or a pool's replica); nil otherwise.
	PD *telemetry.PDModel
	// Adapters are the models of the LoRA adapters probed on the
	// endpoint's base model (telemetry.AdaptersOf); nil otherwise.
	Adapters []string
}

// ITLBounds are the ITL histogram's upper bounds in seconds: decode steps
// of 5–150 ms are the interesting range; stalls land in the last buckets.
func ITLBounds() []float64 {
	return []float64{0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1}
}

// SparkPoints is the width of the GPU panel's sparklines.
const SparkPoints = 16

// Align returns the end of the chart bin holding now, so bins stay put
// between refreshes and only the newest one changes: charts then repaint
// a few cells a second, not every cell (flicker and SSH bytes).
func Align(now time.Time, span time.Duration, n int) time.Time {
	if n <= 0 || span <= 0 {
		return now
	}
	bin := span / time.Duration(n)
	if bin < time.Second {
		bin = time.Second
	}
	return now.Truncate(bin).Add(bin)
}

// Fetch reads everything for one endpoint; chartN is the number of points
// each big chart draws.
func Fetch(src Source, thr ThresholdFunc, ep string, now time.Time, window time.Duration, chartN int) Data {
	d := Data{Endpoint: ep, At: now, Window: window}
	if chartN < 1 {
		chartN = 1
	}
	end := Align(now, window, chartN)
	d.TTFT = src.Series(ep, telemetry.TTFT, end, window, chartN)
	d.TPOT = src.Series(ep, telemetry.TPOT, end, window, chartN)
	sEnd := Align(now, window, SparkPoints)
	d.DRAM = src.Series(ep, telemetry.GPUMemBW, sEnd, window, SparkPoints)
	d.Power = src.Series(ep, telemetry.GPUPower, sEnd, window, SparkPoints)
	d.MBU = src.Series(ep, telemetry.MBU, sEnd, window, SparkPoints)
	d.FB = src.Series(ep, FBUsed, sEnd, window, SparkPoints)
	d.ITL = src.WindowBuckets(ep, telemetry.ITL, now, window, ITLBounds())
	d.Probes = src.Probes(ep)
	d.Live, d.LiveAt = src.Live(ep)
	if thr != nil {
		d.TTFTThr, d.HasTTFTThr = scaled(thr, ep, telemetry.TTFT)
		d.TPOTThr, d.HasTPOTThr = scaled(thr, ep, telemetry.TPOT)
		d.ITLThr, d.HasITLThr = scaled(thr, ep, telemetry.ITL)
	}
	return d
}

func scaled(thr ThresholdFunc, ep string, sig telemetry.Signal) (float64, bool) {
	v, ok := thr(ep, sig)
	return v * sig.Info().Scale, ok
}
