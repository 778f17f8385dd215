package diagnosis

import "github.com/ttftop/ttftop/telemetry"

// figure is one current figure of an endpoint, in display units.
type figure struct {
	value  float64
	stat   string // "mean", "p50", "value"
	unit   string
	source string
	approx bool
}

// Keys of the figures a diagnosis reads. The signal ones are the JSON
// signal names; the derived ones say what they are.
const (
	figClientTTFT = "ttft_client_ms"     // probes' p50
	figServerTTFT = "ttft_server_ms"     // engine's mean (p50 without a sum)
	figServerP50  = "ttft_server_p50_ms" // engine's p50, beside the probes' for the gap
	figGap        = "ttft_gap_ms"        // client p50 − server p50
	figClientTPOT = "tpot_client_ms"     // probes' p50: what speculative decoding's tokens per step change
	figQueue      = string(telemetry.QueueTime)
	figPrefill    = string(telemetry.PrefillTime)
	figStep       = "tpot_ms" // decode step time: engine ITL, else engine TPOT
	figFloor      = "tpot_floor_ms"
	figMBU        = string(telemetry.MBU)
	figDRAM       = string(telemetry.GPUMemBW)
	figPower      = string(telemetry.GPUPower)
	figRunning    = string(telemetry.Running)
	figWaiting    = string(telemetry.Waiting)
	figKV         = string(telemetry.KVCache)
	figPreempt    = string(telemetry.Preemptions)
	figPrefixHit  = string(telemetry.PrefixCacheHit)
	figSpec       = string(telemetry.SpecAccept)
	figSpecLen    = string(telemetry.SpecAcceptLen)
	figErrors     = string(telemetry.ErrorRate)
	figReqRate    = string(telemetry.RequestRate)
	figPromptLen  = "prompt_tokens_per_request" // prompt tok/s ÷ requests/s
)

// figures are one endpoint's current figures by key; a key is absent when
// its figure is unknown, stale or failing.
type figures map[string]figure

// live reports whether a snapshot is a current figure.
func live(s telemetry.SignalSnapshot) bool { return s.State == telemetry.Live }

// central is a distribution's mean where its source gives a sum, else its
// p50; a value signal's value.
func central(s telemetry.SignalSnapshot) (float64, string, bool) {
	switch {
	case s.Mean != nil:
		return *s.Mean, "mean", true
	case s.P50 != nil:
		return *s.P50, "p50", true
	case s.Value != nil:
		return *s.Value, "value", true
	}
	return 0, "", false
}

// serverSide is the engine's own figure of sig: the Server entry of a
// probed endpoint, else the endpoint's figure when it is not the probes'.
func serverSide(es telemetry.EndpointSnapshot, sig telemetry.Signal) (telemetry.SignalSnapshot, bool) {
	if s, ok := es.Server[sig]; ok {
		return s, true
	}
	s, ok := es.Signals[sig]
	if !ok || telemetry.SourceKindOf(s.Source) == telemetry.SourceProbe {
		return telemetry.SignalSnapshot{}, false
	}
	return s, true
}

// clientSide is the probes' figure of sig.
func clientSide(es telemetry.EndpointSnapshot, sig telemetry.Signal) (telemetry.SignalSnapshot, bool) {
	s, ok := es.Signals[sig]
	if !ok || telemetry.SourceKindOf(s.Source) != telemetry.SourceProbe {
		return telemetry.SignalSnapshot{}, false
	}
	return s, true
}

// readFigures collects the figures a diagnosis uses from one endpoint.
func readFigures(es telemetry.EndpointSnapshot) figures {
	f := figures{}
	put := func(key string, s telemetry.SignalSnapshot, ok bool) {
		if !ok || !live(s) {
			return
		}
		if v, stat, ok := central(s); ok {
			f[key] = figure{value: v, stat: stat, unit: s.Unit, source: s.Source, approx: s.Approx}
		}
	}
	if c, ok := clientSide(es, telemetry.TTFT); ok && live(c) && c.P50 != nil {
		f[figClientTTFT] = figure{value: *c.P50, stat: "p50", unit: c.Unit, source: c.Source}
	}
	if c, ok := clientSide(es, telemetry.TPOT); ok && live(c) && c.P50 != nil {
		f[figClientTPOT] = figure{value: *c.P50, stat: "p50", unit: c.Unit, source: c.Source}
	}
	s, ok := serverSide(es, telemetry.TTFT)
	put(figServerTTFT, s, ok)
	if ok && live(s) && s.P50 != nil {
		f[figServerP50] = figure{value: *s.P50, stat: "p50", unit: s.Unit, source: s.Source, approx: s.Approx}
	}
	if c, ok1 := f[figClientTTFT]; ok1 {
		if sv, ok2 := f[figServerP50]; ok2 {
			f[figGap] = figure{value: c.value - sv.value, stat: "p50 − p50", unit: "ms", source: c.source + " − " + sv.source}
		}
	}
	for _, sig := range []telemetry.Signal{telemetry.QueueTime, telemetry.PrefillTime, telemetry.MBU,
		telemetry.GPUMemBW, telemetry.GPUPower, telemetry.Running, telemetry.Waiting, telemetry.KVCache,
		telemetry.Preemptions, telemetry.PrefixCacheHit, telemetry.SpecAccept, telemetry.SpecAcceptLen,
		telemetry.RequestRate} {
		s, ok := es.Signals[sig]
		put(string(sig), s, ok)
	}
	if e, ok := es.Signals[telemetry.ErrorRate]; ok && live(e) && e.Value != nil {
		f[figErrors] = figure{value: *e.Value, stat: "value", unit: e.Unit, source: e.Source}
	}
	readStep(es, f)
	if p, ok := es.Signals[telemetry.PromptTPS]; ok && live(p) && p.Value != nil {
		if r, ok := f[figReqRate]; ok && r.value > 0 {
			f[figPromptLen] = figure{value: *p.Value / r.value, stat: "value", unit: "tok", source: p.Source}
		}
	}
	return f
}

// readStep puts the decode step time and, with an MBU, its roofline floor:
// bytes per step ÷ peak bandwidth = MBU × step time.
func readStep(es telemetry.EndpointSnapshot, f figures) {
	step, ok := serverSide(es, telemetry.ITL)
	if !ok || !live(step) {
		step, ok = serverSide(es, telemetry.TPOT)
	}
	if ok && live(step) {
		if v, stat, ok := central(step); ok && v > 0 {
			f[figStep] = figure{value: v, stat: stat, unit: step.Unit, source: step.Source, approx: step.Approx}
		}
	}
	st, ok1 := f[figStep]
	mbu, ok2 := f[figMBU]
	if ok1 && ok2 && mbu.value > 0 {
		f[figFloor] = figure{value: mbu.value / 100 * st.value, stat: "MBU × step", unit: "ms", source: mbu.source, approx: mbu.approx}
	}
}
