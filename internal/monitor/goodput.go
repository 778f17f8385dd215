package monitor

import (
	"sync"

	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
)

// maxJudgedEndpoints bounds the cache of per-endpoint bounds against a
// source that invents endpoints without end; beyond it bounds are
// computed for each probe.
const maxJudgedEndpoints = 4096

// goodputJudge turns each finished probe into a goodput sample: 1 when it
// met every latency objective of its endpoint, 0 when not (DistServe's
// goodput, vLLM bench's --goodput). The sample is an observation like any
// other, so the store windows it, snapshots and JSON carry it and
// recordings replay it without the objectives.
type goodputJudge struct {
	objs []slo.Objective

	mu     sync.Mutex
	bounds map[string]slo.Bounds
}

func newGoodputJudge(objs []slo.Objective) *goodputJudge {
	return &goodputJudge{objs: objs, bounds: map[string]slo.Bounds{}}
}

// judge returns the goodput sample of a probe observation; ok is false for
// other observations and for endpoints without latency objectives.
func (j *goodputJudge) judge(o telemetry.Observation) (telemetry.Observation, bool) {
	if o.Kind != telemetry.KindProbe || o.Probe == nil || o.Endpoint == "" {
		return telemetry.Observation{}, false
	}
	b := j.boundsOf(o.Endpoint)
	if len(b) == 0 {
		return telemetry.Observation{}, false
	}
	v := 0.0
	if b.Good(o.Probe) {
		v = 1
	}
	// The probe's interval, as its other figures have: goodput turns stale
	// with them, not before (QA: stale beside a live TTFT of one probe).
	return telemetry.Observation{Kind: telemetry.KindSample, At: o.At, Endpoint: o.Endpoint, Source: o.Source,
		Signal: telemetry.Goodput, Value: v, Interval: o.Interval}, true
}

func (j *goodputJudge) boundsOf(endpoint string) slo.Bounds {
	j.mu.Lock()
	defer j.mu.Unlock()
	if b, ok := j.bounds[endpoint]; ok {
		return b
	}
	b := slo.BoundsFor(j.objs, endpoint)
	if len(j.bounds) < maxJudgedEndpoints {
		j.bounds[endpoint] = b
	}
	return b
}
