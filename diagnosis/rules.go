package diagnosis

import (
	"fmt"
	"slices"
	"time"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// The documented ratios every rule compares with (docs/diagnosis.md); no
// rule has an absolute threshold in milliseconds.
const (
	// upRatio: a figure "grew" when it is at least 1.5 × its baseline.
	upRatio = 1.5
	// termShare: a latency term explains a symptom when its growth over
	// its baseline is at least a quarter of the latency it is part of.
	termShare = 0.25
	// collapseRatio: a hit or acceptance rate "collapsed" when it fell
	// to half its baseline or less; a replica is "far" from its siblings
	// at twice their median; without an objective, a latency at twice its
	// baseline is a symptom.
	collapseRatio = 2.0
	// floorShare: decode is at its roofline when the bytes-per-step floor
	// grew by at least half of what TPOT grew; the network is the cause
	// when the client − server gap grew by half of what the client's TTFT
	// grew.
	floorShare = 0.5
	// kvFullPct: the KV cache is near full at 90 % of its blocks.
	kvFullPct = 90.0
	// dominatePct: failures dominate at half of all requests.
	dominatePct = 50.0
)

// input is what the rules read for one endpoint at one refresh.
type input struct {
	es       telemetry.EndpointSnapshot
	f        figures
	base     baselines
	warm     time.Duration
	alerts   []slo.Alert   // pending or firing on this endpoint (or its group)
	siblings []figures     // the other replicas of its group
	watched  time.Duration // since the first refresh that saw the endpoint
}

// baseline is key's own-history baseline once warm.
func (in *input) baseline(key string) (float64, bool) { return in.base.get(key, in.warm) }

// ev is the evidence of key's current figure against its own baseline.
func (in *input) ev(key string) Evidence {
	fg := in.f[key]
	e := Evidence{Figure: key, Stat: fg.stat, Value: round(fg.value), Unit: fg.unit, Source: fg.source, Approx: fg.approx}
	if b, ok := in.baseline(key); ok {
		e.Baseline, e.BaselineFrom = ptr(round(b)), "own"
	}
	return e
}

// evs is ev of each key that has a current figure.
func (in *input) evs(keys ...string) []Evidence {
	var out []Evidence
	for _, k := range keys {
		if _, ok := in.f[k]; ok {
			out = append(out, in.ev(k))
		}
	}
	return out
}

// grew reports whether key is at least upRatio × its baseline, with the
// figure and baseline.
func (in *input) grew(key string) (cur, base float64, ok bool) {
	fg, have := in.f[key]
	b, warm := in.baseline(key)
	if !have || !warm {
		return 0, 0, false
	}
	return fg.value, b, fg.value >= upRatio*b && fg.value > b
}

// explains reports whether term grew and its growth is at least termShare
// of total's current figure.
func (in *input) explains(term, total string) bool {
	cur, base, up := in.grew(term)
	t, ok := in.f[total]
	return up && ok && t.value > 0 && cur-base >= termShare*t.value
}

// collapsed reports whether a rate fell to 1/collapseRatio of a positive
// baseline.
func (in *input) collapsed(key string) bool {
	fg, have := in.f[key]
	b, warm := in.baseline(key)
	return have && warm && b > 0 && fg.value <= b/collapseRatio
}

// down: every probe in the recent window failed, or no figure of the
// endpoint is live and its source reports an error.
func (in *input) down() *Finding {
	if e, ok := in.es.Signals[telemetry.ErrorRate]; ok && telemetry.SourceKindOf(e.Source) == telemetry.SourceProbe &&
		e.Value != nil && *e.Value >= 100 && e.NewestFailed {
		ev := Evidence{Figure: figErrors, Stat: "value", Value: *e.Value, Unit: e.Unit, Source: e.Source,
			Note: fmt.Sprintf("%g of %g probes failed", e.Count, e.Count)}
		if s, ok := in.es.Signals[telemetry.ProbeSuccess]; ok && s.Err != "" {
			ev.Note += ": " + s.Err
		} else if t, ok := in.es.Signals[telemetry.TTFT]; ok && t.Err != "" {
			ev.Note += ": " + t.Err
		}
		return &Finding{Cause: Down, Summary: "down: every probe failed", Evidence: []Evidence{ev},
			Next: "check the endpoint's process and health, then its gateway; the error says where it stopped"}
	}
	var failing *telemetry.SignalSnapshot
	for _, s := range in.es.Signals {
		if s.State == telemetry.Live {
			return nil
		}
		if s.State == telemetry.Error && failing == nil {
			failing = &s
		}
	}
	if failing == nil {
		return nil
	}
	return &Finding{Cause: Down, Summary: "down: no figure, source failing",
		Evidence: []Evidence{{Figure: "live_signals", Stat: "count", Value: 0, Unit: "signals", Source: failing.Source, Note: failing.Err}},
		Next:     "check the endpoint's process and its metrics port; the error says where it stopped"}
}

// errorsDominate: half the requests fail, or an error-rate objective is
// breached and the rate grew over its baseline.
func (in *input) errorsDominate() *Finding {
	fg, ok := in.f[figErrors]
	if !ok || fg.value <= 0 {
		return nil
	}
	breached := slices.ContainsFunc(in.alerts, func(a slo.Alert) bool { return a.Signal == telemetry.ErrorRate })
	b, warm := in.baseline(figErrors)
	if fg.value < dominatePct && !(breached && (!warm || fg.value >= upRatio*b)) {
		return nil
	}
	ev := in.ev(figErrors)
	if fg.value >= dominatePct {
		ev.Baseline, ev.BaselineFrom = ptr(dominatePct), "ratio"
	}
	return &Finding{Cause: Errors, Summary: fmt.Sprintf("errors: %.0f%% of requests fail", fg.value),
		Evidence: append([]Evidence{ev}, in.evs(figReqRate)...),
		Next:     "read the failures' status and message (probe detail, engine logs): overload (429/503) or a broken request path"}
}

// network: the client − server TTFT gap grew by a material share of the
// client's TTFT, and by at least half of what the client's TTFT grew.
func (in *input) network() *Finding {
	gap, bGap, _ := in.grew(figGap)
	client, bClient, clientUp := in.grew(figClientTTFT)
	// The gap compares the probes' requests with all of the engine's, so
	// it moves a little whenever the engine slows: it must carry at least
	// half of the client's growth too. The gap is a difference, often
	// negative, so its own ratio to its baseline says little: the client's
	// TTFT must have grown (a client TTFT that did not has nothing to
	// explain).
	if !clientUp || !in.explains(figGap, figClientTTFT) || gap-bGap < floorShare*(client-bClient) {
		return nil
	}
	return &Finding{Cause: Network, Summary: "network: client − server TTFT gap grew",
		Evidence: in.evs(figGap, figClientTTFT, figServerP50),
		Next:     "the time is spent outside the engine: check the gateway, load balancer, TLS and the path from the probe"}
}

// kvCache: preemptions beyond their baseline, or the cache near full with
// requests waiting.
func (in *input) kvCache() *Finding {
	pre, okP := in.f[figPreempt]
	kv, okK := in.f[figKV]
	w, okW := in.f[figWaiting]
	b, _ := in.baseline(figPreempt)
	preempting := okP && pre.value > 0 && pre.value >= upRatio*b
	full := okK && kv.value >= kvFullPct && okW && w.value > 0
	if !preempting && !full {
		return nil
	}
	evs := in.evs(figKV, figPreempt, figWaiting, figRunning)
	for i := range evs {
		if evs[i].Figure == figKV {
			evs[i].Baseline, evs[i].BaselineFrom = ptr(kvFullPct), "ratio"
		}
	}
	return &Finding{Cause: KVCache, Summary: "KV cache full: preempting", Evidence: evs,
		Next: "the KV cache limits the batch: lower max_num_seqs or max_model_len, raise gpu_memory_utilization, or add replicas"}
}

// prefixCache: the prefix-cache hit rate collapsed and prefill grew.
func (in *input) prefixCache() *Finding {
	// The misses cost prefill: without a longer prefill they explain
	// nothing the endpoint suffers.
	if _, _, longer := in.grew(figPrefill); !longer || !in.collapsed(figPrefixHit) {
		return nil
	}
	return &Finding{Cause: PrefixCache, Summary: "prefix cache: hit rate collapsed",
		Evidence: in.evs(figPrefixHit, figPrefill, figPromptLen),
		Next:     "prompts no longer share cached prefixes: check for a changed system prompt, routing that ignores prefixes, or cache evictions"}
}

// specDecode: speculative acceptance collapsed.
func (in *input) specDecode() *Finding {
	if !in.collapsed(figSpec) {
		return nil
	}
	return &Finding{Cause: SpecDecode, Summary: "speculative decoding: acceptance collapsed",
		Evidence: in.evs(figSpec, figSpecLen, figClientTPOT, figStep),
		Next:     "the draft model no longer predicts the traffic: check the draft model and the prompts' domain, or lower the draft length"}
}

// decode names the cause of a grown decode step: bandwidth when the bytes
// per step explain it, batching when the batch grew at least as much as
// the step (beyond its bytes), gpu_slowdown when the step grew more than
// the batch could explain while MBU or DRAM activity fell.
func (in *input) decode() (*Finding, []string) {
	step, bStep, up := in.grew(figStep)
	if !up {
		return nil, nil
	}
	r, br, batchUp := in.grew(figRunning)
	batchUp = batchUp && r-br >= 1
	// A step reads the weights once for the whole batch, so it grows
	// less than in proportion to the batch: a step that grew more than
	// the batch did is not the batch's doing.
	// Beyond the bytes, a step's time (step − floor: compute and
	// per-sequence work) grows with the batch at a steady cost per
	// sequence: batching keeps that cost per sequence where it was.
	byBatch := batchUp && br > 0 && step/bStep <= r/br
	if fl, ok := in.f[figFloor]; ok && byBatch {
		if bfl, warm := in.baseline(figFloor); warm {
			byBatch = (step-fl.value)/r <= upRatio*(bStep-bfl)/br
		}
	}
	floor, bFloor, _ := in.grew(figFloor)
	_, haveFloor := in.baseline(figFloor)
	if _, ok := in.f[figFloor]; !ok {
		haveFloor = false
	}
	// The same bytes per step (a floor that did not grow) taking longer
	// is a slower GPU, as is MBU or DRAM activity falling.
	_, _, floorUp := in.grew(figFloor)
	mbuFell := in.fell(figMBU) || in.fell(figDRAM) || (haveFloor && !floorUp)
	// More bytes per step come from more sequences or longer contexts:
	// a floor that grew while neither did is the step's window and the
	// MBU's disagreeing (a slowdown ending), not a roofline.
	_, _, kvUp := in.grew(figKV)
	switch {
	case haveFloor && floor-bFloor >= floorShare*(step-bStep) && (batchUp || kvUp):
		return &Finding{Cause: Bandwidth, Summary: "bandwidth: decode at its roofline",
			Evidence: in.evs(figStep, figFloor, figMBU, figRunning),
			Next:     "each step reads more bytes (batch or context): the GPU is at its bandwidth; add replicas or GPUs, or quantise weights or KV"}, nil
	case mbuFell && !byBatch:
		return &Finding{Cause: GPUSlowdown, Summary: "GPU slowdown: same batch, less bandwidth",
			Evidence: in.evs(figStep, figRunning, figMBU, figDRAM, figPower),
			Next:     "the GPU moves fewer bytes per second for the same work: check clocks, temperature, power capping and other processes on it (nvidia-smi -q -d PERFORMANCE)"}, nil
	case byBatch && haveFloor:
		return &Finding{Cause: Batching, Summary: "batching: TPOT grew with the batch",
			Evidence: in.evs(figStep, figRunning, figFloor, figMBU),
			Next:     "the step grows with the batch beyond the bytes it reads (compute, per-sequence overheads): cap concurrency (max_num_seqs) or add replicas"}, nil
	}
	var missing []string
	if !haveFloor {
		missing = append(missing, "MBU (the engine's bytes counter, or model size and GPU for the estimate): without it a longer decode step cannot be split into bandwidth, batching or slowdown")
	}
	return nil, missing
}

// fell reports whether key fell to 1/upRatio of its baseline or below.
func (in *input) fell(key string) bool {
	fg, have := in.f[key]
	b, warm := in.baseline(key)
	return have && warm && b > 0 && fg.value*upRatio <= b
}

// prefill: the prefill time grew by a material share of the server TTFT.
func (in *input) prefill() *Finding {
	if !in.explains(figPrefill, figServerTTFT) {
		return nil
	}
	next := "each token takes longer to prefill at the same prompt length: check compute contention and chunked-prefill settings"
	if _, _, longer := in.grew(figPromptLen); longer {
		next = "prompts grew: check which clients send longer contexts; cap max_model_len or route long prompts apart"
	}
	return &Finding{Cause: Prefill, Summary: "prefill: prompt processing grew",
		Evidence: in.evs(figPrefill, figServerTTFT, figPromptLen), Next: next}
}

// queueing: the queue time grew by a material share of the server TTFT
// while requests wait.
func (in *input) queueing() *Finding {
	w, ok := in.f[figWaiting]
	if !in.explains(figQueue, figServerTTFT) || (ok && w.value <= 0) {
		return nil
	}
	evs := in.evs(figQueue, figServerTTFT, figWaiting, figReqRate)
	if q, t := in.f[figQueue], in.f[figServerTTFT]; t.value > 0 {
		evs = append(evs, Evidence{Figure: "queue_share_of_ttft", Stat: q.stat, Value: round(100 * q.value / t.value), Unit: "%", Source: q.source})
	}
	return &Finding{Cause: Queueing, Summary: "queueing: requests wait for a slot",
		Evidence: evs, Next: "the engine is saturated: add replicas or shed load; if the request rate did not grow, look for a slower step"}
}

// replica: this replica's latency is far from its siblings' median.
func (in *input) replica() *Finding {
	// Replicas that just started (or were just found) hold a few requests
	// each in their windows, and their first ones are slow: compared only
	// once watched for the warm-up.
	if len(in.siblings) == 0 || in.watched < in.warm {
		return nil
	}
	var evs []Evidence
	for _, key := range []string{figServerTTFT, figStep, figClientTTFT} {
		fg, ok := in.f[key]
		if !ok {
			continue
		}
		var vals []float64
		for _, s := range in.siblings {
			if v, ok := s[key]; ok {
				vals = append(vals, v.value)
			}
		}
		if len(vals) == 0 {
			continue
		}
		med := median(vals)
		if fg.value >= collapseRatio*med && fg.value > med {
			evs = append(evs, Evidence{Figure: key, Stat: fg.stat, Value: round(fg.value), Unit: fg.unit, Source: fg.source,
				Baseline: ptr(round(med)), BaselineFrom: "siblings", Approx: fg.approx})
		}
	}
	if len(evs) == 0 {
		return nil
	}
	if in.es.IsRank() {
		return &Finding{Cause: Replica, Summary: "rank: far slower than the server's other ranks", Evidence: evs,
			Next: "one data-parallel rank is sick: inspect its GPUs; its server's figures mix it with the healthy ranks"}
	}
	return &Finding{Cause: Replica, Summary: "replica: far slower than its siblings", Evidence: evs,
		Next: "one replica is sick: drain it from the load balancer and inspect its GPU and host"}
}
