package sim

import (
	"io"
	"net/http"
	"strings"
)

// serveMetrics writes the router's page: the llm-d router's llm_d_epp_*
// families (label sets of its metrics.go: fairness_id, priority, model
// and target model; the TTFT histogram also streaming; the pool gauges
// name) and, beside them, the Gateway API Inference Extension's
// inference_objective_* and inference_pool_* names it still writes,
// with the SLO-violation counters of its predicted-latency guide
// (inference_objective_request_{ttft,tpot}_slo_violation_total).
func (r *Router) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	r.write(&b)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, b.String())
}

func (r *Router) write(b *strings.Builder) {
	model := escapeLabel(r.pd.cfg.Model.Name)
	ready, kv, queue, running := r.poolGauges()
	r.mu.Lock()
	defer r.mu.Unlock()
	newLabels := `model_name="` + model + `",priority="0",target_model_name="` + model + `"`
	oldLabels := `model_name="` + model + `",target_model_name="` + model + `"`
	counter := func(name, labels string, v float64) {
		family(b, name, "counter", "")
		sample(b, name, labels, pyFloat(v))
	}
	counter("llm_d_epp_request_total", `fairness_id="default",`+newLabels, r.total)
	counter("llm_d_epp_request_error_total", `error_code="ServiceUnavailable",fairness_id="default",`+newLabels, r.errs)
	family(b, "llm_d_epp_request_running", "gauge", "")
	sample(b, "llm_d_epp_request_running", `fairness_id="default",`+newLabels, pyFloat(float64(r.running.Load())))
	for _, h := range []struct {
		name, post string
		h          *histogram
	}{
		{"llm_d_epp_request_ttft_seconds", `,model_name="` + model + `",priority="0",streaming="true",target_model_name="` + model + `"`, r.ttft},
		{"llm_d_epp_request_streaming_tpot_seconds", "," + newLabels, r.tpot},
		{"llm_d_epp_request_streaming_itl_seconds", "," + newLabels, r.itl},
		{"llm_d_epp_request_duration_seconds", "," + newLabels, r.dur},
	} {
		family(b, h.name, "histogram", "")
		writeHistogram(b, h.name, h.h, `fairness_id="default",`, h.post, false)
	}
	pool := `name="` + escapeLabel(r.pd.cfg.Pool) + `"`
	gauge := func(name string, v float64) {
		family(b, name, "gauge", "")
		sample(b, name, pool, pyFloat(v))
	}
	gauge("llm_d_epp_ready_endpoints", ready)
	gauge("llm_d_epp_average_kv_cache_utilization", kv)
	gauge("llm_d_epp_average_queue_size", queue)
	gauge("llm_d_epp_average_running_requests", running)

	counter("inference_objective_request_total", oldLabels, r.total)
	counter("inference_objective_request_error_total", `error_code="ServiceUnavailable",`+oldLabels, r.errs)
	for _, h := range []struct {
		name string
		h    *histogram
	}{{"inference_objective_request_ttft_seconds", r.ttft}, {"inference_objective_request_duration_seconds", r.dur}} {
		family(b, h.name, "histogram", "")
		writeHistogram(b, h.name, h.h, "", ","+oldLabels, false)
	}
	counter("inference_objective_request_ttft_slo_violation_total", oldLabels, r.ttftMissed)
	counter("inference_objective_request_tpot_slo_violation_total", oldLabels, r.tpotMissed)
	gauge("inference_pool_ready_pods", ready)
	gauge("inference_pool_average_kv_cache_utilization", kv)
	gauge("inference_pool_average_queue_size", queue)
}

// poolGauges are the InferencePool's figures over its ready workers
// (both roles: llm-d's P/D pool holds the prefill and the decode pods):
// how many, and their mean KV-cache use, waiting and running requests.
func (r *Router) poolGauges() (ready, kv, queue, running float64) {
	for _, s := range r.pd.Workers() {
		if !s.ready() {
			continue
		}
		e := s.engines[0]
		ready++
		kv += e.kvUsage()
		queue += float64(e.nWaiting.Load())
		running += float64(e.nRunning.Load())
	}
	if ready > 0 {
		kv, queue, running = kv/ready, queue/ready, running/ready
	}
	return ready, kv, queue, running
}
