package sim

import "sync"

// busyWindow accumulates per-step GPU activity into 100 ms slots so DCGM
// style ratios can be read over the last second, like dcgm-exporter's
// sampling of DRAM_ACTIVE, without keeping a record per step.
type busyWindow struct {
	mu    sync.Mutex
	slots [windowSlots]slot
	// Since start: ns a step ran and DRAM-active ns, for the energy
	// counter (the integral of the power the ratios give).
	busyTotal, activeTotal float64
}

type slot struct {
	idx     int64   // absolute slot number this entry holds
	busy    float64 // ns a step was running
	active  float64 // ns-equivalent of DRAM at peak bandwidth (bytes / peak)
	memBusy float64 // ns the memory path was the bottleneck
	bytes   float64 // bytes moved
	tokens  float64 // output tokens produced
	steps   float64 // steps (fractional across slot edges)
}

const (
	slotNs      = int64(100e6)
	windowSlots = 32
	windowRead  = 10 // slots read = 1 s
)

// add spreads a step [start,end) over the slots it overlaps,
// proportionally to the overlap.
func (w *busyWindow) add(start, end int64, active, memBusy, bytes, tokens float64) {
	if end <= start {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busyTotal += float64(end - start)
	w.activeTotal += active
	total := float64(end - start)
	for t := start; t < end; {
		idx := t / slotNs
		next := min((idx+1)*slotNs, end)
		f := float64(next-t) / total
		s := &w.slots[idx%windowSlots]
		if s.idx != idx {
			*s = slot{idx: idx}
		}
		s.busy += float64(next - t)
		s.active += active * f
		s.memBusy += memBusy * f
		s.bytes += bytes * f
		s.tokens += tokens * f
		s.steps += f
		t = next
	}
}

// windowStats are ratios over the last full second (the current, partial
// 100 ms slot is excluded so a step recorded ahead of time cannot leak
// future activity into the figure).
type windowStats struct {
	busyFrac   float64 // GPU_UTIL / 100
	dramActive float64 // DCGM_FI_PROF_DRAM_ACTIVE
	memBusy    float64 // DCGM_FI_DEV_MEM_COPY_UTIL / 100
	bytesPerS  float64
	tokensPerS float64
	meanStepNs float64 // busy time / steps
}

func (w *busyWindow) read(now int64) windowStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := now / slotNs
	var busy, active, memBusy, bytes, tokens, steps float64
	for idx := cur - windowRead; idx < cur; idx++ {
		if idx < 0 {
			continue
		}
		s := w.slots[idx%windowSlots]
		if s.idx != idx {
			continue
		}
		busy += s.busy
		active += s.active
		memBusy += s.memBusy
		bytes += s.bytes
		tokens += s.tokens
		steps += s.steps
	}
	span := float64(windowRead * slotNs)
	clamp := func(v float64) float64 { return min(max(v/span, 0), 1) }
	mean := 0.0
	if steps > 0 {
		mean = busy / steps
	}
	return windowStats{
		meanStepNs: mean,
		busyFrac:   clamp(busy),
		dramActive: clamp(active),
		memBusy:    clamp(memBusy),
		bytesPerS:  bytes / (span / 1e9),
		tokensPerS: tokens / (span / 1e9),
	}
}

// totals returns the busy and DRAM-active time since start, in ns. A
// step is counted once planned, so they can lead the clock by at most
// the step in flight.
func (w *busyWindow) totals() (busyNs, activeNs float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.busyTotal, w.activeTotal
}
