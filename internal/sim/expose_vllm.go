package sim

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// snapshot is a consistent copy of one model's metrics for rendering
// without holding the engine's lock.
type snapshot struct {
	e                                    *engine
	name                                 string // escaped model name
	rank                                 string // data-parallel rank, the engine label
	running, waiting                     int64
	kvUsage                              float64
	promptTokens, genTokens, preemptions float64
	success                              map[string]float64
	h                                    map[string]*histogram
	ec                                   engineCounters
	kv                                   kvMetrics
	deferred                             int64
}

func (h *histogram) clone() *histogram {
	c := *h
	c.counts = append([]uint64(nil), h.counts...)
	return &c
}

func (e *engine) snapshot() snapshot {
	m := e.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	sn := snapshot{
		e: e, name: escapeLabel(e.spec.Name), rank: strconv.Itoa(e.rank),
		running: e.nRunning.Load(), waiting: e.nWaiting.Load(), kvUsage: e.kvUsage(),
		promptTokens: m.promptTokens, genTokens: m.genTokens, preemptions: m.preemptions,
		success: map[string]float64{}, ec: m.engineCounters.clone(), kv: m.kv.clone(), deferred: e.nDeferred.Load(),
		h: map[string]*histogram{
			"request_prompt_tokens": m.reqPrompt.clone(), "request_generation_tokens": m.reqGen.clone(),
			"iteration_tokens_total": m.iterTokens.clone(), "request_max_num_generation_tokens": m.maxGen.clone(),
			"request_params_n": m.paramsN.clone(), "request_params_max_tokens": m.paramsMaxTokens.clone(),
			"time_to_first_token_seconds": m.ttft.clone(), "inter_token_latency_seconds": m.itl.clone(),
			"request_time_per_output_token_seconds": m.tpotReq.clone(),
			"e2e_request_latency_seconds":           m.e2e.clone(), "request_queue_time_seconds": m.queue.clone(),
			"request_inference_time_seconds": m.inference.clone(), "request_prefill_time_seconds": m.prefill.clone(),
			"request_decode_time_seconds": m.decode.clone(),
		},
	}
	for k, v := range m.success {
		sn.success[k] = v
	}
	return sn
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	snaps := make([]snapshot, len(s.engines))
	for i, e := range s.engines {
		snaps[i] = e.snapshot()
	}
	var b strings.Builder
	// Sized like the last answer, so the text is not regrown and copied
	// on every scrape.
	b.Grow(max(64<<10, int(s.metricsSize.Load())+4<<10))
	if s.format == FormatSGLang {
		writeSGLang(&b, snaps)
	} else {
		created := pyFloat(float64(s.wallStart.UnixNano()) / 1e9)
		writeProcessStart(&b, created)
		writeVLLM(&b, snaps, created)
	}
	s.metricsSize.Store(int64(b.Len()))
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

// writeProcessStart writes the start time the Python client's process
// collector exports, as vLLM's /metrics has it
// (internal/fixtures/testdata/metrics/vllm-v0.10-metrics.txt): a server
// started again is a new process to whoever reads it.
func writeProcessStart(b *strings.Builder, start string) {
	family(b, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.")
	sample(b, "process_start_time_seconds", "", start)
}

// vllmFamily describes one vLLM V1 family (loggers.py names and HELP).
type vllmFamily struct {
	name, typ, help string
	value           func(sn snapshot) float64 // gauges and counters
	hist            string                    // histogram key in snapshot.h
	// only, when set, limits the family to models it accepts (vLLM
	// registers spec-decode and MFU families only when they are on).
	only func(sn snapshot) bool
}

func specOn(sn snapshot) bool { return sn.e.spec.SpecTokens > 0 }
func mfuOn(sn snapshot) bool  { return sn.e.spec.MFUMetrics }

var vllmFamilies = []vllmFamily{
	{name: "vllm:num_requests_running", typ: "gauge", help: "Number of requests in model execution batches.",
		value: func(sn snapshot) float64 { return float64(sn.running) }},
	{name: "vllm:num_requests_waiting", typ: "gauge", help: "Number of requests waiting to be processed.",
		value: func(sn snapshot) float64 { return float64(sn.waiting) }},
	{name: "vllm:gpu_cache_usage_perc", typ: "gauge",
		help:  "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
		value: func(sn snapshot) float64 { return sn.kvUsage }},
	{name: "vllm:kv_cache_usage_perc", typ: "gauge", help: "KV-cache usage. 1 means 100 percent usage.",
		value: func(sn snapshot) float64 { return sn.kvUsage }},
	{name: "vllm:prefix_cache_queries", typ: "counter", help: "Prefix cache queries, in terms of number of queried tokens.",
		value: func(sn snapshot) float64 { return sn.ec.prefixQueries }},
	{name: "vllm:prefix_cache_hits", typ: "counter", help: "Prefix cache hits, in terms of number of cached tokens.",
		value: func(sn snapshot) float64 { return sn.ec.prefixHits }},
	{name: "vllm:num_preemptions", typ: "counter", help: "Cumulative number of preemption from the engine.",
		value: func(sn snapshot) float64 { return sn.preemptions }},
	{name: "vllm:prompt_tokens", typ: "counter", help: "Number of prefill tokens processed.",
		value: func(sn snapshot) float64 { return sn.promptTokens }},
	{name: "vllm:generation_tokens", typ: "counter", help: "Number of generation tokens processed.",
		value: func(sn snapshot) float64 { return sn.genTokens }},
	{name: "vllm:request_success", typ: "counter", help: "Count of successfully processed requests."},
	{name: "vllm:spec_decode_num_drafts", typ: "counter", help: "Number of spec decoding drafts.", only: specOn,
		value: func(sn snapshot) float64 { return sn.ec.specDrafts }},
	{name: "vllm:spec_decode_num_draft_tokens", typ: "counter", help: "Number of draft tokens.", only: specOn,
		value: func(sn snapshot) float64 { return sn.ec.specDraftTokens }},
	{name: "vllm:spec_decode_num_accepted_tokens", typ: "counter", help: "Number of accepted tokens.", only: specOn,
		value: func(sn snapshot) float64 { return sn.ec.specAccepted }},
	{name: "vllm:spec_decode_num_accepted_tokens_per_pos", typ: "counter", help: "Accepted tokens per draft position.", only: specOn},
	{name: "vllm:estimated_flops_per_gpu", typ: "counter", only: mfuOn,
		help:  "Estimated number of floating point operations per GPU (for Model Flops Utilization calculations).",
		value: func(sn snapshot) float64 { return sn.ec.flops }},
	{name: "vllm:estimated_read_bytes_per_gpu", typ: "counter", only: mfuOn,
		help:  "Estimated number of bytes read from memory per GPU (for Model Flops Utilization calculations).",
		value: func(sn snapshot) float64 { return sn.ec.readBytes }},
	{name: "vllm:estimated_write_bytes_per_gpu", typ: "counter", only: mfuOn,
		help:  "Estimated number of bytes written to memory per GPU (for Model Flops Utilization calculations).",
		value: func(sn snapshot) float64 { return sn.ec.writeBytes }},
	{name: "vllm:request_prompt_tokens", typ: "histogram", help: "Number of prefill tokens processed.", hist: "request_prompt_tokens"},
	{name: "vllm:request_generation_tokens", typ: "histogram", help: "Number of generation tokens processed.", hist: "request_generation_tokens"},
	{name: "vllm:iteration_tokens_total", typ: "histogram", help: "Histogram of number of tokens per engine_step.", hist: "iteration_tokens_total"},
	{name: "vllm:request_max_num_generation_tokens", typ: "histogram", help: "Histogram of maximum number of requested generation tokens.", hist: "request_max_num_generation_tokens"},
	{name: "vllm:request_params_n", typ: "histogram", help: "Histogram of the n request parameter.", hist: "request_params_n"},
	{name: "vllm:request_params_max_tokens", typ: "histogram", help: "Histogram of the max_tokens request parameter.", hist: "request_params_max_tokens"},
	{name: "vllm:time_to_first_token_seconds", typ: "histogram", help: "Histogram of time to first token in seconds.", hist: "time_to_first_token_seconds"},
	{name: "vllm:time_per_output_token_seconds", typ: "histogram",
		help: "Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
		hist: "inter_token_latency_seconds"},
	{name: "vllm:inter_token_latency_seconds", typ: "histogram", help: "Histogram of inter-token latency in seconds.", hist: "inter_token_latency_seconds"},
	{name: "vllm:request_time_per_output_token_seconds", typ: "histogram", help: "Histogram of time_per_output_token_seconds per request.", hist: "request_time_per_output_token_seconds"},
	{name: "vllm:e2e_request_latency_seconds", typ: "histogram", help: "Histogram of e2e request latency in seconds.", hist: "e2e_request_latency_seconds"},
	{name: "vllm:request_queue_time_seconds", typ: "histogram", help: "Histogram of time spent in WAITING phase for request.", hist: "request_queue_time_seconds"},
	{name: "vllm:request_inference_time_seconds", typ: "histogram", help: "Histogram of time spent in RUNNING phase for request.", hist: "request_inference_time_seconds"},
	{name: "vllm:request_prefill_time_seconds", typ: "histogram", help: "Histogram of time spent in PREFILL phase for request.", hist: "request_prefill_time_seconds"},
	{name: "vllm:request_decode_time_seconds", typ: "histogram", help: "Histogram of time spent in DECODE phase for request.", hist: "request_decode_time_seconds"},
}

var finishOrder = []string{finishStop, finishLength, finishAbort}

// writeVLLM renders the V1 exposition: families in loggers.py order, each
// followed by its *_created gauge like prometheus_client does, labels
// sorted (engine, [finished_reason|le], model_name) as in the fixture.
func writeVLLM(b *strings.Builder, snaps []snapshot, created string) {
	all := snaps
	for _, f := range vllmFamilies {
		snaps := all
		if f.only != nil {
			snaps = nil
			for _, sn := range all {
				if f.only(sn) {
					snaps = append(snaps, sn)
				}
			}
			if len(snaps) == 0 {
				continue
			}
		}
		switch {
		case f.typ == "gauge":
			family(b, f.name, "gauge", f.help)
			for _, sn := range snaps {
				sample(b, f.name, `engine="`+sn.rank+`",model_name="`+sn.name+`"`, pyFloat(f.value(sn)))
			}
			continue
		case f.name == "vllm:request_success":
			family(b, f.name+"_total", "counter", f.help)
			for _, sn := range snaps {
				for _, r := range finishOrder {
					sample(b, f.name+"_total", `engine="`+sn.rank+`",finished_reason="`+r+`",model_name="`+sn.name+`"`, pyFloat(sn.success[r]))
				}
			}
			family(b, f.name+"_created", "gauge", f.help)
			for _, sn := range snaps {
				for _, r := range finishOrder {
					sample(b, f.name+"_created", `engine="`+sn.rank+`",finished_reason="`+r+`",model_name="`+sn.name+`"`, created)
				}
			}
			continue
		case f.name == "vllm:spec_decode_num_accepted_tokens_per_pos":
			writePerPosition(b, f, snaps, created)
			continue
		case f.typ == "counter":
			family(b, f.name+"_total", "counter", f.help)
			for _, sn := range snaps {
				sample(b, f.name+"_total", `engine="`+sn.rank+`",model_name="`+sn.name+`"`, pyFloat(f.value(sn)))
			}
		default:
			family(b, f.name, "histogram", f.help)
			for _, sn := range snaps {
				writeHistogram(b, f.name, sn.h[f.hist], `engine="`+sn.rank+`",`, `,model_name="`+sn.name+`"`, false)
			}
		}
		family(b, f.name+"_created", "gauge", f.help)
		for _, sn := range snaps {
			sample(b, f.name+"_created", `engine="`+sn.rank+`",model_name="`+sn.name+`"`, created)
		}
	}
	family(b, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig")
	for _, sn := range all {
		sample(b, "vllm:cache_config_info", `block_size="16",cache_dtype="auto",calculate_kv_scales="False",`+
			`cpu_kvcache_space_bytes="None",cpu_offload_gb="0.0",enable_prefix_caching="`+pyBool(sn.e.srv.cfg.PrefixCaching)+`",engine="`+sn.rank+`",`+
			`gpu_memory_utilization="0.9",is_attention_free="False",kv_sharing_fast_prefill="False",`+
			`mamba_cache_dtype="auto",mamba_page_size_padded="None",mamba_ssm_cache_dtype="auto",`+
			`model_name="`+sn.name+`",num_cpu_blocks="None",num_gpu_blocks="`+strconv.Itoa(sn.e.totalBlocks)+`",`+
			`num_gpu_blocks_override="None",prefix_caching_hash_algo="builtin",sliding_window="None",`+
			`swap_space="4.0",swap_space_bytes="4294967296.0"`, "1.0")
	}
	writeLoRAInfo(b, all)
	if all[0].e.srv.cfg.KVConnector != "" {
		writeKVConnector(b, all, created)
	}
}

// writeHistogram renders buckets (cumulative), count and sum. pre/post
// wrap the le label so callers keep their engine's label order; sumFirst
// selects SGLang's sum → buckets → count order over vLLM's
// buckets → count → sum.
func writeHistogram(b *strings.Builder, name string, h *histogram, pre, post string, sumFirst bool) {
	base := strings.TrimSuffix(strings.TrimPrefix(pre+post[1:], ","), ",")
	if sumFirst {
		sample(b, name+"_sum", base, pyFloat(h.sum))
	}
	// The bucket lines are most of a scrape: written piecewise, without
	// building each line's strings.
	var cum uint64
	for i, c := range h.counts {
		cum += c
		b.WriteString(name)
		b.WriteString(`_bucket{`)
		b.WriteString(pre)
		b.WriteString(`le="`)
		b.WriteString(h.les[i])
		b.WriteByte('"')
		b.WriteString(post)
		b.WriteString("} ")
		writeCount(b, cum)
		b.WriteByte('\n')
	}
	sample(b, name+"_count", base, pyFloat(float64(h.count)))
	if !sumFirst {
		sample(b, name+"_sum", base, pyFloat(h.sum))
	}
}

// writePerPosition renders accepted draft tokens by position, one series
// per draft position (0 … SpecTokens−1), and its _created gauge.
func writePerPosition(b *strings.Builder, f vllmFamily, snaps []snapshot, created string) {
	for _, suffix := range []string{"_total", "_created"} {
		typ := "counter"
		if suffix == "_created" {
			typ = "gauge"
		}
		family(b, f.name+suffix, typ, f.help)
		for _, sn := range snaps {
			for pos := range sn.e.spec.SpecTokens {
				v := created
				if suffix == "_total" {
					n := 0.0
					if pos < len(sn.ec.specPerPos) {
						n = sn.ec.specPerPos[pos]
					}
					v = pyFloat(n)
				}
				sample(b, f.name+suffix, `engine="`+sn.rank+`",model_name="`+sn.name+`",position="`+strconv.Itoa(pos)+`"`, v)
			}
		}
	}
}

// pyBool writes a bool as Python's str() does, as vLLM's info labels are.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
