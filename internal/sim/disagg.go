package sim

import "strings"

// The decode side of disaggregated serving: requests whose prompt KV
// arrives from a prefill worker (Request.RemoteKV), counted as vLLM's
// NIXL connector and its waiting reasons count them.

// vLLM's NixlPromMetrics bounds (nixl_connector.py): transfer time from
// 5 ms, bytes per transfer 2 KiB to 8 GiB in factors of 4.
var (
	nixlXferBuckets  = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0}
	nixlBytesBuckets = func() []float64 {
		var out []float64
		for i := 1; i < 25; i += 2 {
			out = append(out, float64(uint64(1)<<(10+i)))
		}
		return out
	}()
)

// kvRecord is one step's transfers: each one's time (s) and bytes, and
// the prompt tokens they brought.
type kvRecord struct {
	xfer, bytes    []float64
	externalPrompt int
}

func (r *kvRecord) reset() {
	r.xfer, r.bytes, r.externalPrompt = r.xfer[:0], r.bytes[:0], 0
}

// kvReceived books the transfer of s's prompt KV, which ended before the
// step that admits s.
func (r *stepRecord) kvReceived(s *seq, kvBytesPerToken float64) {
	r.kv.xfer = append(r.kv.xfer, secs(s.kvTransfer))
	r.kv.bytes = append(r.kv.bytes, float64(s.prompt)*kvBytesPerToken)
	r.kv.externalPrompt += s.prompt
}

// kvMetrics are the NIXL connector's families and the prompt tokens by
// source; failures stay 0 (the simulator's transfers do not fail).
type kvMetrics struct {
	xfer, bytes    *histogram
	externalPrompt float64
}

func newKVMetrics() kvMetrics {
	return kvMetrics{xfer: newHistogram(nixlXferBuckets), bytes: newHistogram(nixlBytesBuckets)}
}

func (m *kvMetrics) add(r *kvRecord) {
	for i, v := range r.xfer {
		m.xfer.observe(v)
		m.bytes.observe(r.bytes[i])
	}
	m.externalPrompt += float64(r.externalPrompt)
}

// countDeferred publishes how many waiting requests wait for their KV and
// when the first transfer ends (the engine's idle wait).
func (e *engine) countDeferred(stepStart int64) {
	n, next := 0, int64(0)
	for _, s := range e.waiting {
		if s.kvReady > stepStart {
			n++
			if next == 0 || s.kvReady < next {
				next = s.kvReady
			}
		}
	}
	e.nDeferred.Store(int64(n))
	e.nextKV = next
}

func (m kvMetrics) clone() kvMetrics {
	return kvMetrics{xfer: m.xfer.clone(), bytes: m.bytes.clone(), externalPrompt: m.externalPrompt}
}

// writeKVConnector renders what a vLLM worker with the NIXL connector
// adds to its page, as vLLM names and labels them (the 0.27 capture for
// the waiting reasons and prompt sources, nixl_connector.py's
// NixlPromMetrics for the rest): waiting by reason, prompt tokens by
// source, the transfer time and bytes histograms and the failure
// counter. Prefix-cache hits stand for local_cache_hit.
func writeKVConnector(b *strings.Builder, snaps []snapshot, created string) {
	lbl := func(sn snapshot) string { return `engine="` + sn.rank + `",model_name="` + sn.name + `"` }
	family(b, "vllm:num_requests_waiting_by_reason", "gauge", "Number of requests waiting, by the reason they wait.")
	for _, sn := range snaps {
		sample(b, "vllm:num_requests_waiting_by_reason", lbl(sn)+`,reason="capacity"`, pyFloat(float64(sn.waiting-sn.deferred)))
		sample(b, "vllm:num_requests_waiting_by_reason", lbl(sn)+`,reason="deferred"`, pyFloat(float64(sn.deferred)))
	}
	family(b, "vllm:prompt_tokens_by_source_total", "counter", "Number of prompt tokens by where their KV came from.")
	for _, sn := range snaps {
		hits := min(sn.ec.prefixHits, sn.promptTokens-sn.kv.externalPrompt)
		for _, src := range []struct {
			name string
			v    float64
		}{
			{"external_kv_transfer", sn.kv.externalPrompt},
			{"local_cache_hit", hits},
			{"local_compute", sn.promptTokens - sn.kv.externalPrompt - hits},
		} {
			sample(b, "vllm:prompt_tokens_by_source_total", lbl(sn)+`,source="`+src.name+`"`, pyFloat(src.v))
		}
	}
	for _, h := range []struct{ name, help string }{
		{"vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers."},
		{"vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers."},
	} {
		family(b, h.name, "histogram", h.help)
		for _, sn := range snaps {
			hist := sn.kv.xfer
			if h.name == "vllm:nixl_bytes_transferred" {
				hist = sn.kv.bytes
			}
			writeHistogram(b, h.name, hist, `engine="`+sn.rank+`",`, `,model_name="`+sn.name+`"`, false)
		}
		family(b, h.name+"_created", "gauge", h.help)
		for _, sn := range snaps {
			sample(b, h.name+"_created", lbl(sn), created)
		}
	}
	family(b, "vllm:nixl_num_failed_transfers_total", "counter", "Number of failed NIXL KV Cache transfers.")
	for _, sn := range snaps {
		sample(b, "vllm:nixl_num_failed_transfers_total", lbl(sn), "0.0")
	}
}
