package scrape

import (
	"fmt"
	"math"
	"strconv"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// mbu emits MBU for models with a configured bandwidth.Model: measured
// from the engine's bytes-read counter when it moved this interval (vLLM
// --enable-mfu-metrics; present but 0 while disabled), else the estimate
// (Approx) from the decode step time; nothing without either.
func (sc *scrape) mbu() {
	if len(sc.s.cfg.MBU) == 0 {
		return
	}
	for _, mv := range sc.models {
		m, ok := bandwidth.ModelFor(sc.s.cfg.MBU, mv.model)
		if !ok {
			continue
		}
		r := bandwidth.Reading{ReadBytesPerS: mv.readBytesPerS, HasReadBytes: mv.hasReadBytes}
		if mv.hasITL && mv.itl.count() > 0 {
			r.StepSeconds = mv.itl.sum / mv.itl.count()
		}
		if m.KVBytesPerToken > 0 && !r.Measured() {
			capacity, hasCap := sc.kvCapacity(mv)
			r.KVTokens, r.HasKVTokens = sc.liveTokens(mv, m, capacity, hasCap)
		}
		v, approx, ok, err := m.MBU(r)
		if err != nil {
			sc.warn(fmt.Sprintf("MBU for %s: %v", mv.model, err))
			continue
		}
		if ok {
			sc.emit(mv, telemetry.Observation{Kind: telemetry.KindSample, Signal: telemetry.MBU, Value: v, Approx: approx})
		}
	}
}

// liveTokens returns KV tokens in use: a live-token gauge when the engine
// has one, else mean KV usage × capacity.
func (sc *scrape) liveTokens(mv *modelVals, m bandwidth.Model, capacity float64, hasCap bool) (float64, bool) {
	if name := sc.spec.KV.LiveTokens; name != "" {
		if f := sc.page.Families[name]; f != nil && f.Err == nil {
			var sum float64
			n := 0
			for _, ser := range f.Series {
				if sc.model(ser) == mv && !math.IsNaN(ser.Value) {
					sum += ser.Value
					n++
				}
			}
			if n > 0 {
				return sum / float64(n), true // per replica
			}
		}
	}
	if m.KVCapacityTokens > 0 {
		capacity, hasCap = m.KVCapacityTokens, true
	}
	if !hasCap || mv.kvN == 0 {
		return 0, false
	}
	return mv.kvSum / float64(mv.kvN) * capacity, true
}

// kvCapacity reads num_gpu_blocks × block_size from the engine's cache
// config info gauge for model mv (mean over its data-parallel engines):
// the series naming mv, else those naming no model (vLLM before 0.10
// leaves model_name off), never another model's pool.
func (sc *scrape) kvCapacity(mv *modelVals) (float64, bool) {
	kv := sc.spec.KV
	if kv.Config == "" {
		return 0, false
	}
	f := sc.page.Families[kv.Config]
	if f == nil || f.Err != nil {
		return 0, false
	}
	var own, anon [2]float64 // sum, count
	for _, ser := range f.Series {
		blocks, err1 := strconv.ParseFloat(ser.Label(kv.BlocksLabel), 64)
		size, err2 := strconv.ParseFloat(ser.Label(kv.BlockSizeLabel), 64)
		if err1 != nil || err2 != nil || blocks <= 0 || size <= 0 {
			continue
		}
		switch raw := sc.rawModel(ser); {
		case raw == "":
			anon[0], anon[1] = anon[0]+blocks*size, anon[1]+1
		case sanitize.Text(raw) == mv.model:
			own[0], own[1] = own[0]+blocks*size, own[1]+1
		}
	}
	for _, c := range [][2]float64{own, anon} {
		if c[1] > 0 {
			return c[0] / c[1], true
		}
	}
	return 0, false
}
