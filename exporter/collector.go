package exporter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// probeCollector turns the exporter's state into metrics at scrape time.
type probeCollector struct {
	e        *Exporter
	ttft     *prometheus.Desc
	ttfa     *prometheus.Desc
	tpot     *prometheus.Desc
	itl      *prometheus.Desc
	e2e      *prometheus.Desc
	tokens   *prometheus.Desc
	requests *prometheus.Desc
	success  *prometheus.Desc
	good     *prometheus.Desc
	lastAt   *prometheus.Desc
	dropped  *prometheus.Desc
}

func newProbeCollector(e *Exporter) *probeCollector {
	ep := []string{"endpoint", "model"}
	return &probeCollector{
		e: e,
		ttft: prometheus.NewDesc("ttftop_probe_ttft_seconds",
			"Time to first token seen by ttftop's probe: first token-bearing event minus request start. Buckets as vllm:time_to_first_token_seconds.", ep, nil),
		ttfa: prometheus.NewDesc("ttftop_probe_ttfa_seconds",
			"Time to first answer token seen by the probe: first event carrying answer text or a tool call minus request start, after any reasoning (equal to TTFT for a model that does not reason first); requests without an answer are not observed. Buckets as vllm:time_to_first_token_seconds.", ep, nil),
		tpot: prometheus.NewDesc("ttftop_probe_tpot_seconds",
			"Time per output token seen by the probe: (E2E - TTFT) / (output tokens - 1), one observation per request with more than one token. Buckets as vllm:request_time_per_output_token_seconds.", ep, nil),
		itl: prometheus.NewDesc("ttftop_probe_itl_seconds",
			"Inter-token latency seen by the probe: gap between consecutive token-bearing events. Buckets as vllm:inter_token_latency_seconds.", ep, nil),
		e2e: prometheus.NewDesc("ttftop_probe_e2e_seconds",
			"End-to-end latency seen by the probe: last token-bearing event minus request start. Buckets as vllm:e2e_request_latency_seconds.", ep, nil),
		tokens: prometheus.NewDesc("ttftop_probe_output_tokens_total",
			"Output tokens received by successful probes (server usage count, else token-bearing events).", ep, nil),
		requests: prometheus.NewDesc("ttftop_probe_requests_total",
			"Finished probe requests by result (success, failure) and error kind.", []string{"endpoint", "model", "result", "error_kind"}, nil),
		good: prometheus.NewDesc("ttftop_probe_good_requests_total",
			"Finished probe requests that met every latency objective of the endpoint (TTFT, TTFA, TPOT, E2E thresholds; failed requests are not good): goodput = rate(this) / sum without (result, error_kind) (rate(ttftop_probe_requests_total)). Absent when no latency objective applies.", ep, nil),
		success: prometheus.NewDesc("ttftop_probe_success",
			"1 if the endpoint's last probe succeeded, 0 if it failed.", ep, nil),
		lastAt: prometheus.NewDesc("ttftop_probe_last_result_timestamp_seconds",
			"When the endpoint's last probe finished (Unix time): time() minus this is the data's age, which a scrape timestamp cannot tell.", ep, nil),
		dropped: prometheus.NewDesc("ttftop_exporter_dropped_observations_total",
			"Observations dropped by the exporter, by reason (endpoint_limit: more distinct endpoints than the cap).", []string{"reason"}, nil),
	}
}

// Describe sends the fixed descriptors.
func (c *probeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.ttft, c.ttfa, c.tpot, c.itl, c.e2e, c.tokens, c.requests, c.good, c.success, c.lastAt, c.dropped} {
		ch <- d
	}
}

// endpointCopy is what Collect needs of one endpoint, copied under the lock
// so that building and encoding metrics never holds up Observe.
type endpointCopy struct {
	name string
	endpointState
}

// Collect copies the state under the lock, then builds the metrics.
func (c *probeCollector) Collect(ch chan<- prometheus.Metric) {
	eps, dropped := c.e.copyState()
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(dropped), "endpoint_limit")
	for _, ep := range eps {
		lv := []string{ep.name, ep.model}
		for _, h := range []struct {
			d *prometheus.Desc
			h *hist
		}{{c.ttft, &ep.ttft}, {c.ttfa, &ep.ttfa}, {c.tpot, &ep.tpot}, {c.itl, &ep.itl}, {c.e2e, &ep.e2e}} {
			ch <- constMetric(prometheus.NewConstHistogramWithCreatedTimestamp(h.d, h.h.count, h.h.sum, h.h.cumulative(), ep.created, lv...))
		}
		ch <- constMetric(prometheus.NewConstMetricWithCreatedTimestamp(c.tokens, prometheus.CounterValue, ep.tokens, ep.created, lv...))
		for k, n := range ep.results {
			ch <- constMetric(prometheus.NewConstMetricWithCreatedTimestamp(c.requests, prometheus.CounterValue, float64(n), ep.created, ep.name, ep.model, k.result, k.errorKind))
		}
		if _, ok := ep.results[resultKey{"success", ""}]; !ok {
			// Zero until the first success, so rate() sees it.
			ch <- constMetric(prometheus.NewConstMetricWithCreatedTimestamp(c.requests, prometheus.CounterValue, 0, ep.created, ep.name, ep.model, "success", ""))
		}
		if ep.judged {
			ch <- constMetric(prometheus.NewConstMetricWithCreatedTimestamp(c.good, prometheus.CounterValue, float64(ep.good), ep.created, lv...))
		}
		if !ep.hasResult {
			continue // no probe result: success is unknown, not 0
		}
		ch <- constMetric(prometheus.NewConstMetric(c.success, prometheus.GaugeValue, ep.success, lv...))
		ch <- constMetric(prometheus.NewConstMetric(c.lastAt, prometheus.GaugeValue, float64(ep.lastAt.UnixNano())/1e9, lv...))
	}
}

// constMetric reports a construction error as an invalid metric, which
// promhttp logs and counts, instead of panicking in the scrape path. Label
// values are cleaned on ingest, so this is a safety net.
func constMetric(m prometheus.Metric, err error) prometheus.Metric {
	if err != nil {
		return prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(err), err)
	}
	return m
}

func (e *Exporter) copyState() ([]endpointCopy, uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]endpointCopy, 0, len(e.endpoints))
	for name, ep := range e.endpoints {
		if !ep.exported {
			continue
		}
		c := endpointCopy{name: name, endpointState: *ep}
		c.ttft, c.ttfa, c.tpot, c.itl, c.e2e = ep.ttft.clone(), ep.ttfa.clone(), ep.tpot.clone(), ep.itl.clone(), ep.e2e.clone()
		c.results = make(map[resultKey]uint64, len(ep.results))
		for k, v := range ep.results {
			c.results[k] = v
		}
		out = append(out, c)
	}
	return out, e.dropped
}

// lastProbeInfo returns the receipt time of the last probe result and the
// interval /healthz should expect.
func (e *Exporter) lastProbeInfo() (last time.Time, interval time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	interval = e.opts.ProbeInterval
	if interval <= 0 {
		interval = e.interval
	}
	if interval <= 0 {
		interval = DefaultProbeInterval
	}
	return e.lastProbe, interval
}
