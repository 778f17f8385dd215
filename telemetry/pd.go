package telemetry

import "sort"

// Disaggregated (P/D) serving: one model served by a prefill pool and a
// decode pool, often behind a router. Sources label each pool's rows with
// LabelRole (from the stack's own label: llm-d's llm-d.ai/role, Dynamo's
// worker_type, or the scrape target's configured role); PDModels reads a
// snapshot back into models with their pools.
const (
	// LabelRole is an endpoint's role in a disaggregated model.
	LabelRole   = "role"
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// Router signals: the router's own count of requests over its own
// objectives (the llm-d router's per-request TTFT and TPOT goals), shown
// as the router's, apart from ttftop's SLOs.
const (
	RouterTTFTMisses Signal = "router_ttft_slo_violations_per_s"
	RouterTPOTMisses Signal = "router_tpot_slo_violations_per_s"
)

// Router pool signals: the router's own view of the pool of workers
// behind it (the llm-d router's InferencePool gauges), shown on the
// router's rows for every model it serves.
const (
	RouterPoolReady Signal = "router_pool_ready_endpoints"
	RouterPoolQueue Signal = "router_pool_queue_avg"
	RouterPoolKV    Signal = "router_pool_kv_cache_avg"
)

// RouterSignals lists them in display order.
func RouterSignals() []Signal {
	return []Signal{RouterTTFTMisses, RouterTPOTMisses, RouterPoolReady, RouterPoolQueue, RouterPoolKV}
}

var routerSignalInfo = map[Signal]SignalInfo{
	RouterTTFTMisses: {Unit: "/s", Scale: 1, CounterRate: true, Title: "TTFT misses",
		Definition: "router: requests per second whose TTFT the router counted over its own objective (its SLO-violation counter, not ttftop's SLO)"},
	RouterTPOTMisses: {Unit: "/s", Scale: 1, CounterRate: true, Title: "TPOT misses",
		Definition: "router: requests per second whose TPOT the router counted over its own objective (its SLO-violation counter, not ttftop's SLO)"},
	RouterPoolReady: {Unit: "", Scale: 1, Title: "pool ready",
		Definition: "router: endpoints of the pool behind the router that it counts ready, from its own gauge"},
	RouterPoolQueue: {Unit: "req", Scale: 1, Title: "pool queue",
		Definition: "router: waiting requests per ready endpoint of the pool, the mean of what the router last read from each"},
	RouterPoolKV: {Unit: "%", Scale: 100, Title: "pool KV",
		Definition: "router: KV-cache use averaged over the pool's ready endpoints, as the router last read it from each (a mean: the fullest worker can be fuller)"},
}

// PDModel is one disaggregated model read from a snapshot: the rows of
// each pool (a PromQL aggregate per pool, or each scraped worker), the
// number of workers in each and how many of them are up, and the router
// rows in front of it (an llm-d router or Dynamo frontend serving the
// same model), if any.
type PDModel struct {
	Model                    string
	Prefill, Decode, Routers []EndpointSnapshot
	// Workers and Up count each pool's workers (replicas), and those whose
	// target is up.
	PrefillWorkers, DecodeWorkers int
	PrefillUp, DecodeUp           int
}

// PDModels finds the disaggregated models of a snapshot, by model name:
// those with rows of both roles. A pool's rows are its top-level rows
// (an aggregate stands for its replicas, which are counted as workers).
func PDModels(snap Snapshot) []PDModel {
	byModel := map[string]*PDModel{}
	members := map[string][]EndpointSnapshot{}
	for _, es := range snap.Endpoints {
		if es.Group != "" && !es.IsRank() { // a worker's ranks are one worker
			members[es.Group] = append(members[es.Group], es)
		}
	}
	for _, es := range snap.Endpoints {
		role := es.Labels[LabelRole]
		if es.Group != "" || (role != RolePrefill && role != RoleDecode) {
			continue
		}
		m := byModel[es.Model]
		if m == nil {
			m = &PDModel{Model: es.Model}
			byModel[es.Model] = m
		}
		workers := members[es.Name]
		if len(workers) == 0 {
			workers = []EndpointSnapshot{es}
		}
		up := 0
		for _, w := range workers {
			if _, down := w.Target(); !down {
				up++
			}
		}
		if role == RolePrefill {
			m.Prefill, m.PrefillWorkers, m.PrefillUp = append(m.Prefill, es), m.PrefillWorkers+len(workers), m.PrefillUp+up
		} else {
			m.Decode, m.DecodeWorkers, m.DecodeUp = append(m.Decode, es), m.DecodeWorkers+len(workers), m.DecodeUp+up
		}
	}
	var out []PDModel
	for _, m := range byModel {
		if len(m.Prefill) == 0 || len(m.Decode) == 0 {
			continue
		}
		for _, es := range snap.Endpoints {
			if es.Group == "" && es.Model == m.Model && isRouter(es) {
				m.Routers = append(m.Routers, es)
			}
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Model < out[j].Model })
	return out
}

// PDPool is the pool a top-level row is a worker or pool of in a
// disaggregated deployment (RolePrefill or RoleDecode), for a reader who
// cannot see its labels; "" for other rows (the router's row is the model
// as users get it) and for grouped ones (a replica or rank sits under a
// row that says it).
func (es EndpointSnapshot) PDPool() string {
	if role := es.Labels[LabelRole]; es.Group == "" && (role == RolePrefill || role == RoleDecode) {
		return role
	}
	return ""
}

// isRouter reports whether a row is a router or frontend: its engine says
// so, or (a probed router, whose engine the probe names after the worker
// that answers) it carries a router's own signal.
func isRouter(es EndpointSnapshot) bool {
	if es.Labels[LabelRole] != "" {
		return false
	}
	if es.Engine == EngineLLMD || es.Engine == EngineDynamo {
		return true
	}
	for _, sig := range RouterSignals() {
		if _, ok := es.Signals[sig]; ok {
			return true
		}
		if _, ok := es.Server[sig]; ok {
			return true
		}
	}
	return false
}

// TTFTParts is a disaggregated model's mean TTFT split where it is spent
// (milliseconds, the pools' per-request means over the window): the
// prefill worker's queue and prefill, the KV transfer, and the decode
// worker's wait for its first step after the transfer. Sum is the four
// together, what a user waits before the router; Router the router's own
// mean TTFT, nil without a router or its figure.
type TTFTParts struct {
	PrefillQueue, Prefill, KVTransfer, FirstDecode, Sum float64
	Router                                              *float64
}

// TTFTParts reads the parts from the pools' server figures: prefill queue
// = the prefill pool's queue time; prefill = its TTFT − its queue; KV
// transfer = the decode pool's KV transfer time; first decode = the
// decode pool's TTFT − the transfer (a decode worker's TTFT runs from the
// request's arrival, which its KV transfer follows). ok is false when a
// figure is missing: never a part taken as zero.
func (m PDModel) TTFTParts() (p TTFTParts, ok bool) {
	pTTFT, ok1 := poolMean(m.Prefill, TTFT)
	queue, ok2 := poolMean(m.Prefill, QueueTime)
	dTTFT, ok3 := poolMean(m.Decode, TTFT)
	kv, ok4 := poolMean(m.Decode, KVTransferTime)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return TTFTParts{}, false
	}
	p = TTFTParts{PrefillQueue: queue, Prefill: pTTFT - queue, KVTransfer: kv, FirstDecode: dTTFT - kv, Sum: pTTFT + dTTFT}
	if r, ok := poolMean(m.Routers, TTFT); ok {
		p.Router = &r
	}
	return p, true
}

// PoolMean is a pool's per-request mean of a distribution signal over its
// rows, weighted by their counts (the server's figure: an engine's own
// histogram, never a probe's); ok is false without one.
func (m PDModel) PoolMean(role string, sig Signal) (float64, bool) {
	if role == RolePrefill {
		return poolMean(m.Prefill, sig)
	}
	return poolMean(m.Decode, sig)
}

func poolMean(rows []EndpointSnapshot, sig Signal) (float64, bool) {
	var sum, n float64
	for _, es := range rows {
		s, ok := es.Server[sig]
		if !ok {
			s, ok = es.Signals[sig]
		}
		if !ok || s.Mean == nil || s.Count <= 0 || SourceKind(s.Source) == "probe" {
			continue
		}
		sum += *s.Mean * s.Count
		n += s.Count
	}
	if n == 0 {
		return 0, false
	}
	return sum / n, true
}
