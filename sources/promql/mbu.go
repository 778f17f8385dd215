package promql

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/bandwidth"
	"github.com/ttftop/ttftop/telemetry"
)

// MBU in PromQL mode, from the same model descriptions (Config.MBU) and
// the same maths (bandwidth.Model.MBU) as the direct scrape:
//
//   - measured where the engine's bytes-read counter moves: its rate over
//     [W] (engine_read_bytes_per_s) / the per-GPU peak;
//   - else estimated (approx): (weights + live KV bytes) / the mean decode
//     step of the newest ITL window (its Δsum/Δcount, the increments the
//     direct scrape would see between the same two scrapes) / (peak ×
//     GPUs); live KV tokens are the engine's live-token gauge, else KV
//     usage × the capacity its cache-config info gauge gives (kvInfoExpr).
//
// A model row (aggregate) takes the mean over its replicas' MBU this
// refresh: each replica's counter is per GPU, and replicas of one model
// have the same GPUs.

// kvCapacitySignal tags the answer of the KV-cache query; it is not a
// figure of its own.
const kvCapacitySignal telemetry.Signal = "ttftop_kv_capacity"

// Parts of the KV-cache query's answer (partTag).
const (
	kvPartConfig = "kv_config" // info gauge: capacity in its labels
	kvPartLive   = "kv_live"   // live KV tokens
)

// kvInfoExpr is a family's KV-cache query per replica: its cache-config
// info series with the blocks and block-size labels kept, and its live-
// token gauge (mean over the replica's engines, as the direct scrape);
// "" when the engine has neither.
func (g generator) kvInfoExpr(f *family, by string) string {
	kv := f.spec.KV
	var parts []string
	if kv.Config != "" && kv.BlocksLabel != "" && kv.BlockSizeLabel != "" {
		parts = append(parts, labelTag("max by ("+by+", "+kv.BlocksLabel+", "+kv.BlockSizeLabel+") ("+
			f.claimed(kv.Config, kv.Config)+")", partTag, kvPartConfig))
	}
	if kv.LiveTokens != "" {
		parts = append(parts, labelTag("avg by ("+by+") ("+f.claimed(kv.LiveTokens, kv.LiveTokens)+")", partTag, kvPartLive))
	}
	if len(parts) == 0 {
		return ""
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += " or " + p
	}
	return tagged(out, f.tag)
}

// needsKV reports whether a configured model has a KV term, which alone
// needs the KV-cache query.
func needsKV(models map[string]bandwidth.Model) bool {
	for _, m := range models {
		if m.KVBytesPerToken > 0 {
			return true
		}
	}
	return false
}

// kvState is one endpoint's KV-cache description from the KV query.
type kvState struct {
	capSum, capN float64 // capacity tokens over its engines
	live         float64
	hasLive      bool
}

// kvInfo reads the KV-cache query's answer into rd.kv.
func (rd *round) kvInfo(a answer) {
	if !rd.outcome(a, "KV cache config") {
		return
	}
	vec, ok := rd.vector(a, "KV cache config")
	if !ok {
		return
	}
	rd.kv = map[*endpointState]*kvState{}
	for _, smp := range vec {
		f := rd.reg.parser.fams[rd.reg.parser.parse(smp.Metric).family]
		if f == nil {
			continue
		}
		for _, e := range rd.reg.resolve(smp.Metric, false) {
			k := rd.kv[e]
			if k == nil {
				k = &kvState{}
				rd.kv[e] = k
			}
			switch string(smp.Metric[partTag]) {
			case kvPartConfig:
				blocks, err1 := strconv.ParseFloat(string(smp.Metric[model.LabelName(f.spec.KV.BlocksLabel)]), 64)
				size, err2 := strconv.ParseFloat(string(smp.Metric[model.LabelName(f.spec.KV.BlockSizeLabel)]), 64)
				if err1 == nil && err2 == nil && blocks > 0 && size > 0 {
					k.capSum, k.capN = k.capSum+blocks*size, k.capN+1
				}
			case kvPartLive:
				if v := float64(smp.Value); !math.IsNaN(v) && !math.IsInf(v, 0) {
					k.live, k.hasLive = v, true
				}
			}
		}
	}
}

// mbuInputs are one endpoint's figures of this refresh that MBU reads.
type mbuInputs struct {
	itl, read, kvUsage telemetry.Observation
	hasITL, hasRead    bool
	hasKVUsage         bool
}

// mbuValue is one endpoint's MBU this refresh.
type mbuValue struct {
	value  float64
	approx bool
	at     time.Time
	// age is the bytes-read rate's SeriesAge (measured MBU over a young
	// series reads low as that rate does); 0 when not young.
	age time.Duration
}

// noteMBUInput keeps o when MBU reads it: an endpoint's newest live ITL
// window, its bytes-read rate and its KV usage.
func (rd *round) noteMBUInput(o telemetry.Observation) {
	hist := o.Kind == telemetry.KindHistogram && o.Signal == telemetry.ITL
	sample := o.Kind == telemetry.KindSample && (o.Signal == telemetry.EngineReadBytes || o.Signal == telemetry.KVCache)
	if !hist && !sample || len(rd.s.cfg.MBU) == 0 {
		return
	}
	if rd.mbuIn == nil {
		rd.mbuIn = map[string]*mbuInputs{}
	}
	x := rd.mbuIn[o.Endpoint]
	if x == nil {
		x = &mbuInputs{}
		rd.mbuIn[o.Endpoint] = x
	}
	switch {
	case hist && (!x.hasITL || o.At.After(x.itl.At)):
		x.itl, x.hasITL = o, true // the newest window
	case o.Signal == telemetry.EngineReadBytes:
		x.read, x.hasRead = o, true
	case o.Signal == telemetry.KVCache:
		x.kvUsage, x.hasKVUsage = o, true
	}
}

// mbu adds MBU for the endpoints of configured models (see above).
func (rd *round) mbu() {
	models := rd.s.cfg.MBU
	if len(models) == 0 {
		return
	}
	in := rd.mbuIn
	got := map[*endpointState]mbuValue{}
	for _, e := range rd.reg.all() {
		if len(e.members) > 0 || e.family == ttftopTag {
			continue
		}
		m, ok := bandwidth.ModelFor(models, e.info.Model)
		x := in[e.info.Name]
		if !ok || x == nil {
			continue
		}
		if v, ok := rd.mbuOf(e, m, x); ok {
			got[e] = v
		}
	}
	for _, e := range rd.reg.all() {
		if len(e.members) == 0 {
			v, ok := got[e]
			switch {
			case ok:
				rd.addMBU(e, v)
			case e.seenValue[telemetry.MBU] && rd.stopped(e):
				// No inputs any more: its last MBU turns stale, as its
				// other values do.
				rd.add(rd.noValue(e, telemetry.MBU, rd.began))
			}
			continue
		}
		var sum float64
		n := 0
		agg := mbuValue{}
		for _, r := range e.members {
			v, ok := got[r]
			if !ok {
				continue
			}
			sum += v.value
			n++
			agg.approx = agg.approx || v.approx
			if v.age > 0 && (agg.age == 0 || v.age < agg.age) {
				agg.age = v.age // the youngest replica's, as a sum's
			}
			if v.at.After(agg.at) {
				agg.at = v.at
			}
		}
		if n > 0 {
			agg.value = sum / float64(n)
			rd.addMBU(e, agg)
		}
	}
}

// mbuOf is one replica's MBU from its inputs (bandwidth.Model.MBU).
func (rd *round) mbuOf(e *endpointState, m bandwidth.Model, x *mbuInputs) (mbuValue, bool) {
	r := bandwidth.Reading{}
	if x.hasRead {
		r.ReadBytesPerS, r.HasReadBytes = x.read.Value, true
	}
	if x.hasITL && len(x.itl.Buckets) > 0 {
		if n := x.itl.Buckets[len(x.itl.Buckets)-1].Count; n > 0 {
			r.StepSeconds = x.itl.Value / n
		}
	}
	if m.KVBytesPerToken > 0 && !r.Measured() {
		r.KVTokens, r.HasKVTokens = rd.liveTokens(e, x)
	}
	v, approx, ok, err := m.MBU(r)
	if err != nil {
		rd.warn(fmt.Sprintf("MBU for %s: %v", e.info.Model, err))
		return mbuValue{}, false
	}
	if !ok {
		return mbuValue{}, false
	}
	out := mbuValue{value: v, approx: approx, at: x.itl.At}
	if !approx {
		out.at, out.age = x.read.At, x.read.SeriesAge
	}
	return out, true
}

// liveTokens is the replica's live KV tokens: the engine's gauge, else KV
// usage × capacity (the mean over its engines' cache configs).
func (rd *round) liveTokens(e *endpointState, x *mbuInputs) (float64, bool) {
	k := rd.kv[e]
	switch {
	case k != nil && k.hasLive:
		return k.live, true
	case k != nil && k.capN > 0 && x.hasKVUsage:
		return x.kvUsage.Value * k.capSum / k.capN, true
	}
	return 0, false
}

func (rd *round) addMBU(e *endpointState, v mbuValue) {
	e.seenValue[telemetry.MBU] = true
	o := telemetry.Observation{Kind: telemetry.KindSample, At: v.at, Endpoint: e.info.Name, Signal: telemetry.MBU,
		Value: v.value, Approx: v.approx, Interval: rd.valueInterval(e), SeriesAge: v.age}
	if !v.approx {
		o.RateWindow = rd.s.cfg.Window // the bytes-read counter's rate over [W]
	}
	rd.add(o)
}
